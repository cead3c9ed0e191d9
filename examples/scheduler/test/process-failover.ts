// The failover scenario with real processes (node dist/cli.js master|worker) against a real
// backend, shared by failover.k8s.test.ts and failover.consul.test.ts. The task table's writer
// runs in the test process (it is the "database" — never killed); masters and workers reach it
// over loopback HTTP and are killed with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from '@jest/globals';
import { StaleTokenError } from '@muster/core';
import { sleep } from '@muster/core/adapter';
import { HttpTaskStore, LocalTaskStore, TableServer } from '../src/index.js';
import { violations } from './invariants.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');

interface Event {
  readonly at: number;
  readonly who: string;
  readonly event: string;
  readonly token?: string;
}

export interface ProcessFailoverOptions {
  /** The discovery/lock/heartbeat sections of the YAML. */
  readonly ports: string;
  readonly leaseTtl: number;
  readonly heartbeatTtl: number;
  /** How long after the SIGKILL the next leader must be elected. */
  readonly takeoverBound: number;
  readonly suffix: string;
  readonly env?: Readonly<Record<string, string>>;
}

export interface ProcessFailoverResult {
  readonly takeoverMs: number;
  /** The killed worker died with a task running (its open run was reassigned and finished elsewhere). */
  readonly interrupted: boolean;
  /** Leadership changes seen, with reasons: one election before the kill and one after is the clean run. */
  readonly history: readonly string[];
  /** How the SIGSTOPped-then-resumed leader stepped down: its renewal failed ('demoted') or the table refused it ('fenced'). */
  readonly pausedStepDown: string;
  readonly reassigned: number;
  readonly refused: number;
}

function lastEvent(events: readonly Event[], name: string): Event | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (events[i]!.event === name) return events[i];
  return undefined;
}

class Cluster {
  readonly events: Event[] = [];
  readonly procs = new Map<string, ChildProcess>();
  readonly stderr = new Map<string, string>();

  spawn(role: 'master' | 'worker', id: string, config: string, env: Readonly<Record<string, string>>): void {
    const child = spawn(process.execPath, [cli, role, '--config', config, '--id', id], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    let buffered = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.startsWith('{')) this.events.push(JSON.parse(line) as Event);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.set(id, (this.stderr.get(id) ?? '') + chunk));
    this.procs.set(id, child);
  }

  /** Sends `signal`; for anything but SIGSTOP/SIGCONT, waits for the exit. Returns the time after. */
  async kill(id: string, signal: NodeJS.Signals): Promise<number> {
    const child = this.procs.get(id)!;
    if (child.exitCode !== null || child.signalCode !== null) return Date.now();
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') {
      child.kill(signal);
      return Date.now();
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
    return Date.now();
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.procs.keys()].map(async (id) => {
        const patience = new AbortController();
        const forced = sleep(8000, patience.signal).then(
          () => this.kill(id, 'SIGKILL'),
          () => undefined,
        );
        await this.kill(id, 'SIGCONT');
        await this.kill(id, 'SIGTERM').finally(() => patience.abort());
        await forced;
      }),
    );
  }

  /** The master that logged 'elected' last and has not logged 'demoted' or 'fenced' since. */
  leader(): Event | undefined {
    const last = lastEvent(this.events, 'elected');
    if (!last) return undefined;
    const after = this.events.slice(this.events.indexOf(last));
    return after.some((e) => e.who === last.who && (e.event === 'demoted' || e.event === 'fenced')) ? undefined : last;
  }

  /** Leadership changes and failures, for the report. */
  masterHistory(): string[] {
    return this.events
      .filter((e) => ['elected', 'demoted', 'fenced', 'campaign-failed', 'leader-failed'].includes(e.event))
      .map(
        (e) =>
          `${e.at} ${e.who} ${e.event}${e.token ? ` token ${e.token}` : ''}${(e as { reason?: string }).reason ? ` (${(e as { reason?: string }).reason})` : ''}`,
      );
  }

  describe(): string {
    return [...this.stderr].map(([id, text]) => `--- ${id} stderr ---\n${text.slice(-2000)}`).join('\n');
  }
}

async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeout: number,
  cluster: Cluster,
): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${cluster.describe()}`);
    await sleep(50);
  }
}

export async function processFailover(options: ProcessFailoverOptions): Promise<ProcessFailoverResult> {
  if (!existsSync(cli))
    throw new Error(`${cli} is missing: run \`npx tsc -b\` at the repository root first (the processes run the compiled CLI)`);
  const dir = mkdtempSync(join(tmpdir(), 'scheduler-failover-'));
  const server = await TableServer.listen(await LocalTaskStore.open({ file: join(dir, 'tasks.json') }));
  const table = new HttpTaskStore(server.url);
  const config = join(dir, 'muster.yaml');
  writeFileSync(
    config,
    `version: 1
${options.ports}
scheduler:
  table: ${server.url}
  lockName: scheduler-master-${options.suffix}
  workerGroup: scheduler-workers-${options.suffix}
  service: scheduler-worker-${options.suffix}
  leaseTtl: ${options.leaseTtl}ms
  heartbeatTtl: ${options.heartbeatTtl}ms
  beatInterval: ${Math.round(options.heartbeatTtl / 4)}ms
  pollInterval: 100ms
  assignInterval: 200ms
  capacity: 2
`,
  );
  const cluster = new Cluster();
  try {
    await table.submit(
      Array.from({ length: 24 }, (_, i) => ({ id: `t${String(i).padStart(2, '0')}`, durationMs: 300 + ((i * 53) % 500) })),
    );
    for (let i = 0; i < 3; i++) cluster.spawn('worker', `worker-${i}-${options.suffix}`, config, options.env ?? {});
    for (let i = 0; i < 3; i++) cluster.spawn('master', `master-${i}-${options.suffix}`, config, options.env ?? {});

    await until('a leader', () => cluster.events.find((e) => e.event === 'elected'), 30_000, cluster);
    const running = await until(
      'a worker running a task',
      async () => (await table.tasks()).find((t) => t.status === 'running' && (t.worker ?? '').startsWith('worker-')),
      30_000,
      cluster,
    );
    const crashedAt = new Map<string, number>();
    crashedAt.set(running.worker!, await cluster.kill(running.worker!, 'SIGKILL'));
    const first = cluster.leader()!;
    const killedAt = await cluster.kill(first.who, 'SIGKILL');

    const second = await until(
      'a new leader',
      () => cluster.events.find((e) => e.event === 'elected' && e.at > killedAt),
      options.takeoverBound + 10_000,
      cluster,
    );
    const takeoverMs = second.at - killedAt;
    expect(takeoverMs).toBeLessThanOrEqual(options.takeoverBound);
    expect(BigInt(second.token!)).toBeGreaterThan(BigInt(first.token!));

    // What the killed leader would write if it came back: refused through the same HTTP path.
    await until(
      'the new leader sealed the table',
      async () => BigInt((await table.state()).highestToken) >= BigInt(second.token!),
      10_000,
      cluster,
    );
    await expect(table.assign(BigInt(first.token!), first.who, [])).rejects.toBeInstanceOf(StaleTokenError);

    // A pause, not a crash: SIGSTOP the new leader past its lease, let a third master take over,
    // then SIGCONT. The resumed master still holds its old lease object and may write before its
    // renewal fails; the table refuses it, and it must step down either way.
    await table.submit(
      Array.from({ length: 12 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, durationMs: 300 + ((i * 71) % 400) })),
    );
    const pausedAt = await cluster.kill(second.who, 'SIGSTOP');
    const third = await until(
      'a leader while the second is paused',
      () => cluster.events.find((e) => e.event === 'elected' && e.at > pausedAt),
      options.takeoverBound + 10_000,
      cluster,
    );
    await cluster.kill(second.who, 'SIGCONT');
    const stepDown = await until(
      'the resumed master to step down',
      () => cluster.events.find((e) => e.who === second.who && e.at > third.at && (e.event === 'demoted' || e.event === 'fenced')),
      options.leaseTtl + 10_000,
      cluster,
    );

    await until('every task done', async () => (await table.tasks()).every((t) => t.status === 'done'), 90_000, cluster);
    const state = await table.state();
    expect(violations(state, crashedAt)).toEqual([]);
    return {
      takeoverMs,
      // The worker is picked from a snapshot, so it may finish its task just before the kill lands.
      interrupted: state.runs.some((r) => r.worker === running.worker && r.endedAt === undefined),
      pausedStepDown: stepDown.event,
      history: cluster.masterHistory(),
      reassigned: state.tasks.filter((t) => t.attempt > 1).length,
      refused: state.fencedWrites.filter((w) => w.rejectedBecause !== undefined).length,
    };
  } finally {
    await cluster.stopAll();
    await server.close();
  }
}
