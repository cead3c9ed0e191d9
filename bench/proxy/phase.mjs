// One measured phase: the load generator against one target, with what the target's processes
// spent meanwhile read from /proc at the window's start and end (as the generator reports them).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { windowSeconds } from './args.mjs';
import { cpuSeconds, loadAverage, memory, proxyConnections } from './procfs.mjs';
import { pinnedCommand } from './pinning.mjs';
import { replicaShare } from './routing.mjs';

/** Runs the generator `bin` with `args` to completion; resolves its "done" line as an object. */
function generator(bin, args, cpus, nice, onMeasure) {
  return new Promise((resolve, reject) => {
    const [cmd, ...rest] = pinnedCommand([bin, ...args], cpus, nice);
    const child = spawn(cmd, rest, { stdio: ['ignore', 'pipe', 'inherit'] });
    let done;
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return; // gocql logs the odd plain line
      }
      if (msg.phase === 'measure') onMeasure();
      else if (msg.phase === 'done') done = { ...msg, at: onMeasure.end(), probe: onMeasure.report() };
      else if (msg.phase === 'error') reject(new Error(`cql-load ${args.join(' ')}: ${msg.error}`));
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!done || code !== 0) return reject(new Error(`cql-load ${args.join(' ')}: exit ${code}`));
      void Promise.resolve(done.probe).then((probe) => resolve({ ...done, probe }), reject);
    });
  });
}

/** Creates the keyspace (SimpleStrategy, RF 1) and table and writes every key, direct. */
export async function setupKeyspace(bin, cassandra, keys) {
  const args = ['-setup', '-hosts', cassandra.contactPoints.join(','), '-keys', String(keys), '-replication', '1'];
  await new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`cql-load ${args.join(' ')}: exit ${code}`))));
  });
}

/**
 * Measures `target` under one mode (saturation, rate, or hop: round trips to an echo process) and
 * operation. CPU per request is what each process spent in the window divided by the requests
 * completed in it; the proxy's is its whole cost per request. A target with a `probe` (the
 * event-loop probe, loop-probe.cjs) is reset when the window opens and read when it closes.
 */
export async function runPhase({ bin, target, cassandra, mode, op, options, cpus, round, sampleExtra = () => undefined }) {
  const cassandraPids = cassandra.nodes.map((n) => n.pid);
  const sample = () => ({
    proxy: target.pid ? cpuSeconds(target.pid) : undefined,
    cassandra: cassandraPids.reduce((sum, pid) => sum + (cpuSeconds(pid) ?? NaN), 0),
  });
  let before;
  let connections;
  let extraBefore;
  let routedBefore;
  let routedAfter;
  // Connections are counted when the window opens: by the "done" line the generator may be closing them.
  const onMeasure = () => {
    before = sample();
    extraBefore = sampleExtra();
    connections = target.pid ? proxyConnections(target.pid, target.listenPort, cassandra.nativePort) : undefined;
    target.probe?.reset();
    routedBefore = target.routed?.();
  };
  onMeasure.end = () => ({ cpu: sample(), memory: target.pid ? memory(target.pid) : undefined, extra: sampleExtra(), load: loadAverage() });
  onMeasure.report = () => {
    routedAfter = target.routed?.();
    return target.probe?.report();
  };
  const args = ['-hosts', target.hosts.join(','), '-op', op, '-mode', mode, '-keys', String(options.keys)];
  args.push('-concurrency', String(options.concurrency));
  // A saturation-only run never resolves --rate auto: the generator takes a number, and needs none then.
  if (mode !== 'saturation') args.push('-rate', String(options.rate));
  args.push('-duration', `${windowSeconds(options, mode).toFixed(1)}s`, '-warmup', `${options.warmup}s`);
  // Go's bool flags take their value only as -flag=value.
  args.push(`-token-aware=${target.tokenAware ?? options.tokenAware}`, '-seed', String(options.seed + round * 1009));
  const done = await generator(bin, args, cpus, options.nice ?? 0, onMeasure);
  const n = Math.max(1, done.completed);
  const routedShare = replicaShare(await routedBefore, await routedAfter);
  const perRequest = (a, b) => (a === undefined || b === undefined ? undefined : ((b - a) * 1e6) / n);
  return {
    target: target.name,
    mode,
    op,
    opsPerSec: done.opsPerSec,
    p50: done.p50Ms,
    p99: done.p99Ms,
    p999: done.p999Ms,
    errors: done.errors,
    errorSamples: done.errorSamples,
    late: done.late,
    maxLate: done.maxLateMs,
    histogram: done.histogram,
    loadAverage: done.at.load,
    loopDelay: done.probe?.loopDelay,
    routedShare,
    gc: done.probe?.gc,
    cpuProxy: perRequest(before.proxy, done.at.cpu.proxy),
    cpuCassandra: perRequest(before.cassandra, done.at.cpu.cassandra),
    cpuLoad: (done.cpuSeconds * 1e6) / n,
    rssMiB: done.at.memory?.rssMiB,
    anonMiB: done.at.memory?.anonMiB,
    peakMiB: done.at.memory?.peakMiB,
    clientConns: connections?.clients,
    backendConns: connections?.backend,
    completed: done.completed,
    extraBefore,
    extraAfter: done.at.extra,
  };
}
