// The failover scenario with real processes (node dist/cli.js master|worker) against a real
// backend, shared by failover.k8s.test.ts, failover.consul.test.ts and failover.k8s.cassandra.test.ts.
// The task table is never killed: by default its writer runs in the test process and masters and
// workers reach it over loopback HTTP; or it is Cassandra (through CQL proxies). Masters and
// workers are killed with SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from '@jest/globals';
import { StaleTokenError } from '@muster/core';
import { sleep } from '@muster/core/adapter';
import { HttpTaskStore, LocalTaskStore, TableServer, type TaskStore } from '../src/index.js';
import { violations } from './invariants.js';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');

interface Event {
  readonly at: number;
  readonly who: string;
  readonly event: string;
  readonly token?: string;
  readonly storedToken?: string;
  readonly error?: string;
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
  /** The task table the processes use; default: a table server in this process, over HTTP. */
  readonly table?: (lockName: string) => Promise<TableUnderTest>;
  /**
   * How the second leader is paused: SIGSTOP from outside at any moment ('signal', default), or
   * by itself right before a leader write, after all its own checks ('before-write': the store
   * must have the pause hook, SCHEDULER_TEST_PAUSE_DIR), so its write surely goes out stale.
   */
  readonly pause?: 'signal' | 'before-write';
  /** Skip the SIGKILLs: only the pause (the control run with the fence removed). Default true. */
  readonly kills?: boolean;
  /** Return the invariant violations instead of failing on them (the control run). */
  readonly expectViolations?: boolean;
}

/** A task table for the processes: the test's own client of it, and the `scheduler:` lines that name it. */
export interface TableUnderTest {
  readonly store: TaskStore;
  /** YAML lines under `scheduler:` (indented two spaces), e.g. `  table: http://…`. */
  readonly section: string;
  close(): Promise<void>;
}

async function tableServer(dir: string): Promise<TableUnderTest> {
  const server = await TableServer.listen(await LocalTaskStore.open({ file: join(dir, 'tasks.json') }));
  return { store: new HttpTaskStore(server.url), section: `  table: ${server.url}`, close: () => server.close() };
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
  /** Leader writes the paused master tried after it was resumed and the store itself refused ('fenced' with the token the store holds). */
  readonly refusedAfterPause: number;
  readonly violations: readonly string[];
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

  /** True once the process is stopped (state T in /proc): it has paused itself. */
  stopped(id: string): boolean {
    const pid = this.procs.get(id)?.pid;
    if (pid === undefined) return false;
    try {
      // The state follows the command name in parentheses.
      return /\)\s+T/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
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
          `${e.at} ${e.who} ${e.event}${e.token ? ` token ${e.token}` : ''}${(e as { reason?: string }).reason ? ` (${(e as { reason?: string }).reason})` : ''}${e.error ? ` (${e.error})` : ''}`,
      );
  }

  describe(): string {
    const last = [...this.procs.keys()].map((id) => {
      const mine = this.events.filter((e) => e.who === id).slice(-3);
      return `--- ${id}: ${mine.map((e) => `${e.at} ${e.event}`).join(', ') || 'no events'}`;
    });
    return [...last, ...[...this.stderr].map(([id, text]) => `--- ${id} stderr ---\n${text.slice(-2000)}`)].join('\n');
  }
}

async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeout: number,
  cluster: Cluster,
): Promise<T> {
  const deadline = Date.now() + timeout;
  let failure: unknown;
  for (;;) {
    // A read of the table can fail while the machine is overloaded (a proxy dropped a connection
    // and the driver reconnects): only the deadline ends the wait, and it names the last failure.
    const value = await Promise.resolve()
      .then(probe)
      .catch((error: unknown) => ((failure = error), undefined));
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${what}${failure ? ` (last probe failed: ${(failure as Error).message})` : ''}\n${cluster.describe()}`,
      );
    await sleep(50);
  }
}

/** Submits, retrying a failed attempt (submit is idempotent: a task already there stays as it is). */
async function submit(table: TaskStore, tasks: { id: string; durationMs: number }[], cluster: Cluster): Promise<void> {
  await until(
    `${tasks.length} tasks submitted`,
    async () => {
      await table.submit(tasks);
      return true;
    },
    30_000,
    cluster,
  );
}

export async function processFailover(options: ProcessFailoverOptions): Promise<ProcessFailoverResult> {
  if (!existsSync(cli))
    throw new Error(`${cli} is missing: run \`npx tsc -b\` at the repository root first (the processes run the compiled CLI)`);
  const dir = mkdtempSync(join(tmpdir(), 'scheduler-failover-'));
  const underTest = await (options.table ?? (() => tableServer(dir)))(`scheduler-master-${options.suffix}`);
  const table = underTest.store;
  const config = join(dir, 'muster.yaml');
  const env = { ...options.env, SCHEDULER_TEST_PAUSE_DIR: dir };
  writeFileSync(
    config,
    `version: 1
${options.ports}
scheduler:
${underTest.section}
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
    await submit(
      table,
      Array.from({ length: 24 }, (_, i) => ({ id: `t${String(i).padStart(2, '0')}`, durationMs: 300 + ((i * 53) % 500) })),
      cluster,
    );
    for (let i = 0; i < 3; i++) cluster.spawn('worker', `worker-${i}-${options.suffix}`, config, env);
    for (let i = 0; i < 3; i++) cluster.spawn('master', `master-${i}-${options.suffix}`, config, env);

    // Six processes start at once on a loaded 2-core machine: give them time.
    await until('a leader', () => cluster.events.find((e) => e.event === 'elected'), 60_000, cluster);
    const running = await until(
      'a worker running a task',
      async () => (await table.tasks()).find((t) => t.status === 'running' && (t.worker ?? '').startsWith('worker-')),
      30_000,
      cluster,
    );
    const crashedAt = new Map<string, number>();
    let takeoverMs = Number.NaN;
    let second = cluster.leader()!;
    if (options.kills ?? true) {
      crashedAt.set(running.worker!, await cluster.kill(running.worker!, 'SIGKILL'));
      const first = second;
      const killedAt = await cluster.kill(first.who, 'SIGKILL');

      second = await until(
        'a new leader',
        () => cluster.events.find((e) => e.event === 'elected' && e.at > killedAt),
        options.takeoverBound + 10_000,
        cluster,
      );
      takeoverMs = second.at - killedAt;
      expect(takeoverMs).toBeLessThanOrEqual(options.takeoverBound);
      expect(BigInt(second.token!)).toBeGreaterThan(BigInt(first.token!));

      // What the killed leader would write if it came back: refused through the same path.
      await until(
        'the new leader sealed the table',
        async () => BigInt((await table.state()).highestToken) >= BigInt(second.token!),
        10_000,
        cluster,
      );
      const answer = await until(
        "the table's answer to the killed leader's write",
        () =>
          table.assign(BigInt(first.token!), first.who, []).then(
            () => 'accepted',
            (error: unknown) => {
              if (error instanceof StaleTokenError) return error;
              throw error; // a failed call (not an answer): asked again
            },
          ),
        30_000,
        cluster,
      );
      expect(answer).toBeInstanceOf(StaleTokenError);
    }

    // A pause, not a crash: the new leader is stopped past its lease, a third master takes over,
    // then it is resumed. It still holds its old lease object and may write before its renewal
    // fails; the table refuses it, and it must step down either way. Paused right before a write
    // (after its own checks), it surely writes once with the old token.
    await submit(
      table,
      Array.from({ length: 12 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, durationMs: 300 + ((i * 71) % 400) })),
      cluster,
    );
    let pausedAt: number;
    if (options.pause === 'before-write') {
      writeFileSync(join(dir, second.who), '');
      await until('the leader to pause itself before a write', () => cluster.stopped(second.who), 10_000, cluster);
      pausedAt = Date.now();
    } else pausedAt = await cluster.kill(second.who, 'SIGSTOP');
    const third = await until(
      'a leader while the second is paused',
      () => cluster.events.find((e) => e.event === 'elected' && e.at > pausedAt),
      options.takeoverBound + 10_000,
      cluster,
    );
    await until(
      'the third leader sealed the table',
      async () => BigInt((await table.state()).highestToken) >= BigInt(third.token!),
      10_000,
      cluster,
    );
    const resumedAt = await cluster.kill(second.who, 'SIGCONT');
    const refusals = () =>
      cluster.events.filter((e) => e.who === second.who && e.at >= resumedAt && e.event === 'fenced' && e.storedToken !== undefined);
    if (options.pause === 'before-write')
      await until(
        "the resumed leader's write to be refused (or, without a fence, accepted)",
        async () => refusals().length > 0 || violations(await table.state(), crashedAt).some((v) => v.startsWith('stale write accepted')),
        options.leaseTtl + 10_000,
        cluster,
      );
    const stepDown = await until(
      'the resumed master to step down',
      () => cluster.events.find((e) => e.who === second.who && e.at > third.at && (e.event === 'demoted' || e.event === 'fenced')),
      options.leaseTtl + 10_000,
      cluster,
    );

    // The control run only shows the stale write; it need not wait for the work to finish.
    if (!options.expectViolations)
      await until('every task done', async () => (await table.tasks()).every((t) => t.status === 'done'), 90_000, cluster);
    const state = await until('the final table', () => table.state(), 30_000, cluster);
    const found = violations(state, crashedAt);
    if (!options.expectViolations) expect(found).toEqual([]);
    return {
      takeoverMs,
      // The worker is picked from a snapshot, so it may finish its task just before the kill lands.
      interrupted: state.runs.some((r) => r.worker === running.worker && r.endedAt === undefined),
      pausedStepDown: stepDown.event,
      history: cluster.masterHistory(),
      reassigned: state.tasks.filter((t) => t.attempt > 1).length,
      refused: state.fencedWrites.filter((w) => w.rejectedBecause !== undefined).length,
      refusedAfterPause: refusals().length,
      violations: found,
    };
  } finally {
    await cluster.stopAll();
    await underTest.close();
  }
}
