import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sleep } from '@muster/core/adapter';
import type { BackendProfile } from './backends/profile.js';
import type { Bounds, FaultKind, HistoryEvent, LockEvent } from './history.js';
import type { HostCommand, HostReport, ObservedMember } from './protocol.js';
import { Random } from './random.js';
import { realNow, timeLineEnv } from './stepped-clock.js';
import type { FencedResourcePort } from './fenced-resource.js';
import { serverErrors } from './canned-response.js';
import { TcpProxy, type BlackHole } from './tcp-proxy.js';
import { formatVerdict, judge, type Verdict } from './verdict.js';

export interface RunOptions {
  readonly profile: BackendProfile;
  readonly contenders: number;
  readonly durationMs: number;
  readonly seed: number;
  /** Heartbeat ttl (default: the lock ttl). */
  readonly heartbeatTtl?: number;
  /** Only these faults (default: every fault the profile can take). */
  readonly faults?: readonly FaultKind[];
  readonly log?: (line: string) => void;
  /** Where protected writes go (e.g. Cassandra); default: the in-orchestrator resource. */
  readonly resource?: FencedResourcePort;
}

export interface RunResult {
  readonly seed: number;
  readonly bounds: Bounds;
  readonly verdict: Verdict;
  readonly table: string;
  readonly history: readonly HistoryEvent[];
}

/** One contender incarnation and the process that runs it. */
interface Incarnation {
  readonly slot: number;
  readonly generation: number;
  readonly who: string;
  readonly host: Host;
  /** Its Muster is up (createMuster returned): from here on it beats. */
  started: boolean;
  paused: boolean;
  exited: boolean;
  runningSince: number;
  stoppedAt: number | undefined;
}

interface Host {
  readonly child: ChildProcess;
  send(command: HostCommand): void;
}

const hostScript = fileURLToPath(new URL('./host.js', import.meta.url));

/** Where the host script is when running from sources under jest: the built dist beside them. */
function hostPath(): string {
  return hostScript.replace(/\/src\/host\.(js|ts)$/, '/dist/host.js');
}

/**
 * Runs contenders against a backend for a while, injects faults from the seed, and judges the
 * recorded history (see verdict.ts). Contenders are separate processes unless the profile is in-process.
 */
export async function runChaos(options: RunOptions): Promise<RunResult> {
  const { profile, seed } = options;
  const log = options.log ?? (() => undefined);
  const ttl = profile.ttl;
  const heartbeatTtl = options.heartbeatTtl ?? ttl;
  const bounds: Bounds = { ttl, livenessBound: profile.livenessBound, heartbeatTtl, heartbeatGrace: profile.heartbeatGrace };
  const random = new Random(seed);
  const enabled = (options.faults ?? profile.faults).filter((f) => profile.faults.includes(f));
  // Faults come from a shuffled deck, so even a short run injects every kind once before any
  // repeats; then the faults on the holder, which find the most, come once more.
  const holderFaults = enabled.filter((f) => f === 'kill-holder' || f === 'pause-holder' || f === 'zombie');
  let deck: FaultKind[] = [];
  const draw = (): FaultKind => {
    if (deck.length === 0) deck = [...random.shuffle(enabled), ...random.shuffle(holderFaults)];
    return deck.shift()!;
  };
  const history: HistoryEvent[] = [];
  const incarnations: Incarnation[] = [];
  const hosts: Host[] = [];
  const proxies: TcpProxy[] = [];
  /** The observer's own proxy (a backend reached over the network): `observer-black-hole` cuts it off. */
  let observerProxy: TcpProxy | undefined;
  const views = new Map<string, ObservedMember>();
  let holder: string | undefined;
  let observerUp: () => void = () => undefined;
  const observing = new Promise<void>((resolve) => (observerUp = resolve));
  let highest = -1n;
  let seq = 0;
  /** Server processes under SIGSTOP now: a run that ends (or fails) meanwhile must let them go on. */
  const stoppedServer = new Set<number>();
  /** SIGCONT to every server process this run stopped; one that died meanwhile is simply gone. */
  const resumeServers = () => {
    for (const pid of stoppedServer) {
      stoppedServer.delete(pid);
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // ESRCH: it exited while stopped; the others are still resumed.
      }
    }
  };

  const startHost = (): Host => {
    const child = fork(hostPath(), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [], env: timeLineEnv() });
    const host: Host = { child, send: (command) => child.connected && child.send(command) };
    child.on('message', (report: HostReport) => onReport(host, report));
    child.on('exit', () => {
      for (const inc of incarnations) {
        if (inc.host === host && !inc.exited) markExited(inc, realNow());
      }
    });
    hosts.push(host);
    return host;
  };

  const markExited = (inc: Incarnation, at: number) => {
    inc.exited = true;
    inc.stoppedAt ??= at;
    record({ kind: 'exited', at, who: inc.who });
  };

  const record = (event: LockEvent) => {
    history.push(event);
    if (event.kind === 'acquired') holder = event.who;
    else if ((event.kind === 'lost' || event.kind === 'released' || event.kind === 'exited') && event.who === holder) holder = undefined;
  };

  const onReport = (host: Host, report: HostReport) => {
    switch (report.t) {
      case 'event':
        if (report.event.kind === 'exited') {
          const inc = incarnations.find((i) => i.who === report.event.who);
          if (inc && !inc.exited) markExited(inc, report.event.at);
          return;
        }
        if (report.event.kind === 'spawned') {
          const inc = incarnations.find((i) => i.who === report.event.who);
          if (inc) Object.assign(inc, { started: true, runningSince: report.event.at });
        }
        record(report.event);
        return;
      case 'write': {
        const token = BigInt(report.token);
        const { rid: _rid, t: _t, ...write } = report;
        if (options.resource) {
          // An external resource judges one write at a time, so completion order is its order.
          void options.resource.write(token, report.who, `${report.who}#${report.rid}`).then(
            (accepted) => {
              history.push({ kind: 'write', seq: seq++, accepted, ...write });
              host.send({ t: 'ack', rid: report.rid, accepted });
            },
            (error: unknown) => {
              // Its fate unknown, the write stays out of the history; the contender stops as if refused.
              log(`  resource failed on a write of ${report.who} (left out of the history): ${(error as Error).message}`);
              host.send({ t: 'ack', rid: report.rid, accepted: false });
            },
          );
          return;
        }
        // The fenced resource: refuses a token below the highest it has accepted.
        const accepted = token >= highest;
        if (accepted) highest = token;
        history.push({ kind: 'write', seq: seq++, accepted, ...write });
        host.send({ t: 'ack', rid: report.rid, accepted });
        return;
      }
      case 'view':
        observerUp();
        views.clear();
        for (const m of report.members) views.set(m.member, m);
        return;
      case 'log':
        log(`  [${report.who}] ${report.message}`);
        return;
    }
  };

  let sharedHost: Host | undefined;
  const spawn = (slot: number, generation: number, clockOffset = 0): Incarnation => {
    const host = profile.inProcess ? (sharedHost ??= startHost()) : startHost();
    const who = `c${slot}.${generation}`;
    const inc: Incarnation = {
      slot,
      generation,
      who,
      host,
      started: false,
      paused: false,
      exited: false,
      runningSince: realNow(),
      stoppedAt: undefined,
    };
    incarnations.push(inc);
    host.send({
      t: 'spawn',
      spec: {
        who,
        member: profile.memberId(slot),
        generation,
        config: profile.contenderConfig(slot, proxies[slot]?.port),
        group: profile.group,
        lockName: profile.lockName,
        ttl,
        heartbeatTtl,
        seed: random.fork(),
        clockOffset,
      },
    });
    return inc;
  };

  const live = () => incarnations.filter((i) => !i.exited);
  const newest = (slot: number) => incarnations.filter((i) => i.slot === slot).at(-1)!;
  const current = () => live().find((i) => i.who === holder);

  const fault = (kind: FaultKind, at: number, end: number, target: string | undefined, detail: string) => {
    history.push({ kind: 'fault', fault: kind, at, end, ...(target !== undefined ? { target } : {}), detail });
    log(`  fault ${kind}${target ? ` ${target}` : ''}: ${detail}`);
  };

  const pause = (inc: Incarnation) => {
    inc.host.child.kill('SIGSTOP');
    for (const i of live()) if (i.host === inc.host) Object.assign(i, { paused: true, stoppedAt: realNow() });
  };
  const resume = (inc: Incarnation) => {
    inc.host.child.kill('SIGCONT');
    for (const i of live()) if (i.host === inc.host) Object.assign(i, { paused: false, stoppedAt: undefined, runningSince: realNow() });
  };
  const kill = (inc: Incarnation) => {
    const at = realNow();
    if (profile.inProcess) inc.host.send({ t: 'crash', who: inc.who });
    else inc.host.child.kill('SIGKILL');
    inc.stoppedAt = at;
    return at;
  };

  const inject = async (kind: FaultKind): Promise<void> => {
    const target = current() ?? random.pick(live());
    const at = realNow();
    switch (kind) {
      case 'kill-holder':
      case 'kill-any': {
        const victim = kind === 'kill-holder' ? current() : random.pick(live());
        if (!victim) return;
        // Every other victim stays down long enough for its heartbeat to be judged stale.
        const down = random.next() < 0.5 ? random.between(0.2, 1) * ttl : 2 * (heartbeatTtl + profile.heartbeatGrace);
        fault(kind, kill(victim), realNow(), victim.who, `SIGKILL, replaced after ${Math.round(down)} ms`);
        await sleep(down);
        spawn(victim.slot, newest(victim.slot).generation + 1);
        return;
      }
      case 'restart-behind': {
        const victim = random.pick(live());
        fault(kind, kill(victim), realNow(), victim.who, 'SIGKILL, restarted on a clock 60 s behind');
        spawn(victim.slot, newest(victim.slot).generation + 1, -60_000);
        return;
      }
      case 'pause-holder': {
        const d = random.between(1.5, 2.5) * ttl;
        pause(target);
        await sleep(d);
        resume(target);
        fault(kind, at, realNow(), profile.inProcess ? undefined : target.who, `SIGSTOP for ${Math.round(d)} ms`);
        return;
      }
      case 'zombie': {
        const d = random.between(1.5, 2.5) * ttl;
        pause(target);
        spawn(target.slot, newest(target.slot).generation + 1);
        await sleep(d);
        resume(target);
        await sleep(ttl);
        kill(target);
        fault(kind, at, realNow(), target.who, `SIGSTOP for ${Math.round(d)} ms while a replacement started, SIGCONT, SIGKILL after a ttl`);
        return;
      }
      case 'clock-step': {
        const ms = Math.round((random.next() < 0.5 ? -1 : 1) * random.between(1, 3) * ttl);
        const victim = random.pick(live());
        // In-process contenders share their host's clock, so a step moves all of them.
        victim.host.send({ t: 'step', who: profile.inProcess ? '*' : victim.who, ms });
        fault(kind, at, at + Math.abs(ms) + ttl, profile.inProcess ? undefined : victim.who, `clock stepped ${ms > 0 ? '+' : ''}${ms} ms`);
        return;
      }
      case 'latency':
      case 'drop': {
        const proxy = proxies[target.slot];
        if (!proxy) return;
        const d = random.between(1, 3) * ttl;
        if (kind === 'latency') proxy.setLatency(Math.round(0.2 * ttl));
        else proxy.drop(true);
        await sleep(d);
        proxy.setLatency(0);
        proxy.drop(false);
        fault(
          kind,
          at,
          realNow(),
          target.who,
          kind === 'latency' ? `${Math.round(0.2 * ttl)} ms each way for ${Math.round(d)} ms` : `connections cut for ${Math.round(d)} ms`,
        );
        return;
      }
      case 'black-hole':
      case 'observer-black-hole': {
        // The slow network that never fails: requests hang until the client's own timeouts. On the
        // observer: the watcher that decides who is dead hears nothing, and must judge on its own clock.
        const onObserver = kind === 'observer-black-hole';
        const proxy = onObserver ? observerProxy : proxies[target.slot];
        if (!proxy) return;
        const d = random.between(1, 3) * ttl;
        const direction = random.pick<BlackHole>(['both', 'up', 'down']);
        proxy.blackHole(direction);
        await sleep(d);
        proxy.blackHole(undefined);
        const way = { both: 'both ways', up: 'towards the server', down: `towards the ${onObserver ? 'observer' : 'contender'}` }[
          direction
        ];
        fault(
          kind,
          at,
          realNow(),
          onObserver ? 'observer' : target.who,
          `bytes swallowed ${way} for ${Math.round(d)} ms (connections kept open; those hit stay broken)`,
        );
        return;
      }
      case 'server-errors': {
        // Every contender's requests are answered 409/429/500/503 (an overloaded server, seen by all).
        if (proxies.length === 0) return;
        const d = random.between(1, 3) * ttl;
        const errors = serverErrors(new Random(random.fork()));
        for (const p of proxies) p.failWith(errors);
        await sleep(d);
        for (const p of proxies) p.failWith(undefined);
        fault(kind, at, realNow(), undefined, `every contender's requests answered 409/429/500/503 for ${Math.round(d)} ms`);
        return;
      }
      case 'server-pause': {
        const processes = profile.serverProcesses?.() ?? [];
        if (processes.length === 0) return;
        // One process or all of them (an apiserver whose etcd hangs behaves unlike a hung apiserver).
        const chosen = random.next() < 0.5 ? processes : [random.pick(processes)];
        const d = random.between(1, 3) * ttl;
        // Interrupted during the pause, the run must not leave a server stopped behind it.
        const onSignal = (signal: NodeJS.Signals) => {
          resumeServers();
          process.kill(process.pid, signal);
        };
        process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
        try {
          for (const p of chosen) {
            stoppedServer.add(p.pid);
            process.kill(p.pid, 'SIGSTOP');
          }
          await sleep(d);
        } finally {
          resumeServers();
          process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        }
        fault(kind, at, realNow() + ttl, undefined, `SIGSTOP of ${chosen.map((p) => p.name).join(' and ')} for ${Math.round(d)} ms`);
        return;
      }
      case 'delete-lock':
        await profile.deleteLock?.();
        fault(kind, at, realNow() + 2 * ttl, undefined, `deleted lock object '${profile.lockName}'`);
        return;
      case 'invalidate-holder': {
        const detail = (await profile.invalidateHolder?.()) ?? 'not supported';
        fault(kind, at, realNow() + 2 * ttl, undefined, detail);
        return;
      }
      case 'backend-restart':
        await profile.restart?.();
        fault(kind, at, realNow() + ttl, undefined, `backend restarted in ${Math.round(realNow() - at)} ms`);
        return;
    }
  };

  const sample = () => {
    const at = realNow();
    for (let slot = 0; slot < options.contenders; slot++) {
      const mine = incarnations.filter((i) => i.slot === slot);
      const running = mine.filter((i) => i.started && !i.exited && !i.paused);
      // A process still loading its client is neither judged alive nor dead yet.
      const starting = mine.some((i) => !i.started && !i.exited);
      const newestRunning = running.at(-1);
      const view = views.get(profile.memberId(slot));
      const stopped = mine.map((i) => i.stoppedAt ?? 0);
      history.push({
        kind: 'hb-sample',
        at,
        member: `c${slot}`,
        ...(newestRunning ? { runningGeneration: newestRunning.generation, runningSince: newestRunning.runningSince } : {}),
        ...(running.length === 0 && !starting && mine.length > 0 ? { downSince: Math.max(...stopped) } : {}),
        observedAlive: view?.alive ?? false,
        ...(view?.generation !== undefined ? { observedGeneration: view.generation } : {}),
      });
    }
  };

  log(
    `chaos ${profile.name}: seed ${seed}, ${options.contenders} contenders, ttl ${ttl} ms, ${Math.round(options.durationMs / 1000)} s, faults ${enabled.join(', ') || 'none'}`,
  );
  let sampler: NodeJS.Timeout | undefined;
  try {
    if (profile.upstream) {
      for (let slot = 0; slot < options.contenders; slot++) {
        const proxy = new TcpProxy(profile.upstream, profile.upstreamTls ? { tls: profile.upstreamTls } : {});
        await proxy.listen();
        proxies.push(proxy);
      }
      observerProxy = new TcpProxy(profile.upstream, profile.upstreamTls ? { tls: profile.upstreamTls } : {});
      await observerProxy.listen();
    }
    const observer = profile.inProcess ? (sharedHost ??= startHost()) : startHost();
    observer.send({ t: 'observe', spec: { config: profile.observerConfig(observerProxy?.port), group: profile.group } });
    // Members start once the observer watches, so it sees each one's first beat arrive (a record
    // already there when a watch starts is of unknown age and judged by its writer's timestamp).
    const observerWait = new AbortController();
    await Promise.race([observing, sleep(60_000, observerWait.signal).catch(() => undefined)]);
    observerWait.abort();
    for (let slot = 0; slot < options.contenders; slot++) spawn(slot, 1);
    const started = realNow();
    const end = started + options.durationMs;
    sampler = setInterval(sample, 250);
    // Let the contenders come up before the first fault (loading a client can take seconds here).
    await sleep(Math.min(options.durationMs / 4, 2 * ttl));
    while (enabled.length > 0 && realNow() < end - 3 * ttl) {
      await inject(draw());
      await sleep(Math.max(0, Math.min(random.between(1, 2.5) * ttl, end - realNow())));
    }
    await sleep(Math.max(0, end - realNow()));
    clearInterval(sampler);
    const finished = realNow();
    const firstAcquired = history.find((e) => e.kind === 'acquired')?.at ?? started;
    const verdict = judge(history, bounds, Math.min(firstAcquired, started + bounds.livenessBound), finished);
    const table = formatVerdict(
      verdict,
      bounds,
      `chaos ${profile.name} (seed ${seed}, ${options.contenders} contenders, ttl ${ttl} ms, ${Math.round((finished - started) / 1000)} s)`,
    );
    return { seed, bounds, verdict, table, history };
  } finally {
    clearInterval(sampler);
    resumeServers();
    for (const inc of incarnations) if (inc.paused) inc.host.child.kill('SIGCONT');
    await Promise.all(
      hosts.map(async ({ child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.disconnect();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
    await Promise.all([...proxies, ...(observerProxy ? [observerProxy] : [])].map((p) => p.close()));
  }
}
