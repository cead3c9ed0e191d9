// The side-by-side proxy benchmark: one gocql load generator (./load) against Cassandra direct,
// the Muster proxy and datastax/cql-proxy, in one run with rounds interleaved, in saturation and
// fixed-rate modes, reads and writes. Prints; never asserts. See README.md for what each figure is.
//   npm run testenv -- up cassandra cassandra3 && npx tsc -b && node bench/proxy/run.mjs [--nodes 3] [--help]
import { readState } from '../../scripts/testenv/state.mjs';
import { parseBenchArgs, usage } from './args.mjs';
import { findKnee, rateBelowKnee } from './knee.mjs';
import { cleanUpOnSignal, pinProcesses, planPinning } from './pinning.mjs';
import { runPhase, setupKeyspace } from './phase.mjs';
import { niceAutogroups, reniceProcesses } from './priority.mjs';
import { loadAverage } from './procfs.mjs';
import { printReport } from './report.mjs';
import { directTarget, startCqlProxy, startEcho, startMuster } from './targets.mjs';
import { cqlLoad, datastaxCqlProxy, datastaxCqlProxyVersion } from './tools.mjs';

let options;
try {
  options = parseBenchArgs(process.argv.slice(2));
} catch (error) {
  console.error(`bench/proxy: ${error.message}\n\n${usage}`);
  process.exit(2);
}
if (options.help) {
  console.log(usage);
  process.exit(0);
}
const server = options.nodes === 3 ? 'cassandra3' : 'cassandra';
const cassandra = readState()[server];
if (!cassandra) {
  console.error(`bench/proxy: the testenv server ${server} is not running; start it with: npm run testenv -- up ${server}`);
  process.exit(2);
}

const bin = await cqlLoad();
const cqlProxyBin = options.targets.includes('cql-proxy') ? await datastaxCqlProxy() : undefined;
await setupKeyspace(bin, cassandra, options.keys);

const pinning = planPinning(options.pin);
const cassandraPids = cassandra.nodes.map((n) => n.pid);
// Each step undoes itself when a later one fails: the Cassandra processes never stay pinned or reniced.
const undo = [];
const unpin = () =>
  undo
    .splice(0)
    .reverse()
    .forEach((restore) => restore());
try {
  undo.push(niceAutogroups([process.pid, ...cassandraPids], options.nice));
  undo.push(reniceProcesses(cassandraPids, options.nice));
  undo.push(pinProcesses(cassandraPids, pinning.backend));
} catch (error) {
  unpin();
  console.error(
    `bench/proxy: cannot place the Cassandra processes: ${error.message}${options.nice < 0 ? ' (a negative --nice needs root)' : ''}`,
  );
  process.exit(2);
}
const targets = [];
const results = [];
const loadAtStart = loadAverage();
cleanUpOnSignal(() => {
  for (const t of targets) t.kill?.();
  unpin();
});

/**
 * The fixed rate: as given, or `headroom` × the knee of a sweep of direct reads (knee.mjs), with
 * the same pinning and token awareness as the measured phases.
 */
async function fixedRate() {
  if (options.rate !== 'auto') return { rate: options.rate };
  const direct = directTarget(cassandra, 'direct');
  const sweepOptions = { ...options, seconds: 3, samples: 0, warmup: 1 };
  const { steps, knee } = await findKnee(async (rate) => {
    try {
      const r = await runPhase({
        bin,
        target: direct,
        cassandra,
        mode: 'rate',
        op: 'read',
        options: { ...sweepOptions, rate },
        cpus: pinning.load,
        round: 0,
      });
      console.error(`  knee sweep: ${rate} req/s direct reads: ${r.opsPerSec.toFixed(0)} ops/s, p99 ${r.p99.toFixed(3)} ms`);
      return { rate, opsPerSec: r.opsPerSec, p99: r.p99, errors: r.errors };
    } catch (error) {
      console.error(`  knee sweep: ${rate} req/s: FAILED ${error.message}`);
      return { rate, opsPerSec: 0, p99: Infinity, errors: 1 };
    }
  });
  const sweep = steps.map((s) => `${s.rate}: p99 ${s.p99.toFixed(2)} ms`).join(', ');
  if (knee === undefined) {
    const rate = rateBelowKnee(steps[0].rate, options.headroom);
    return { rate, why: `no knee: even ${steps[0].rate} req/s raised direct's p99 (${sweep}); rate ${rate} req/s` };
  }
  const rate = rateBelowKnee(knee, options.headroom);
  return { rate, why: `knee of direct reads ${knee} req/s (${sweep}); rate ${options.headroom} × knee = ${rate} req/s` };
}

try {
  const { rate, why: rateWhy } = options.modes.includes('rate') ? await fixedRate() : { rate: options.rate };
  options = { ...options, rate };
  for (const name of options.targets) {
    if (name === 'direct' || name === 'direct-rr') targets.push(directTarget(cassandra, name));
    if (name === 'muster') targets.push(await startMuster(cassandra, pinning.proxy, { loopDelay: options.loopDelay, nice: options.nice }));
    if (name === 'muster-base') {
      const base = { loopDelay: options.loopDelay, nice: options.nice, checkout: options.base, name };
      targets.push(await startMuster(cassandra, pinning.proxy, base));
    }
    if (name === 'cql-proxy') targets.push(await startCqlProxy(cqlProxyBin, cassandra, pinning.proxy, options.nice));
  }
  const echo = options.modes.includes('rate') && options.hop ? await startEcho(bin, pinning.proxy, options.nice) : undefined;
  if (echo) targets.push({ ...echo, name: 'hop', measured: false });
  console.log(
    `bench/proxy: ${server} (${cassandra.nodes.length} node(s), Cassandra ${cassandra.version}, keyspace muster_bench RF 1, ${options.keys} keys), ` +
      `gocql v4 load generator (token-aware ${options.tokenAware ? 'on' : 'off'})` +
      (cqlProxyBin ? `, datastax/cql-proxy ${datastaxCqlProxyVersion()} with its defaults` : ''),
  );
  console.log(
    `pinning: ${pinning.why} (Cassandra pids ${cassandraPids.join(', ')}; proxy pids ${targets.flatMap((t) => (t.pid ? [`${t.name} ${t.pid}`] : [])).join(', ')})`,
  );
  if (rateWhy) console.log(`fixed rate: ${rateWhy}`);
  console.log(
    `seed ${options.seed} (replay: --seed ${options.seed} or BENCH_SEED=${options.seed}); load average at start ${loadAtStart}; ` +
      (options.nice ? `Cassandra, proxies and load generator at nice ${options.nice}` : 'default priority (--nice 0)'),
  );
  const measured = targets.filter((t) => t.measured !== false);
  const phase = async (label, args) => {
    try {
      const r = await runPhase({ bin, cassandra, options, round: args.round, cpus: pinning.load, ...args });
      results.push(r);
      console.error(
        `  ${label}: ${r.opsPerSec.toFixed(0)} ops/s, p50 ${r.p50.toFixed(3)} ms, p99 ${r.p99.toFixed(3)} ms, load ${r.loadAverage}`,
      );
    } catch (error) {
      // One failed phase (a target refusing connections under overload) must not lose the run.
      results.push({ target: args.target.name, mode: args.mode, op: args.op, failed: error.message });
      console.error(`  ${label}: FAILED ${error.message}`);
    }
  };
  for (let round = 0; round < options.rounds; round++) {
    // Each round starts with a different target, so none always runs first (cold) or last.
    const order = measured.map((_, i) => measured[(i + round) % measured.length]);
    for (const mode of options.modes) {
      if (mode === 'rate' && echo) await phase(`round ${round + 1} hop`, { target: echo, mode: 'hop', op: 'read', round });
      for (const op of options.ops) {
        for (const target of order) await phase(`round ${round + 1} ${mode} ${op} ${target.name}`, { target, mode, op, round });
      }
    }
  }
} finally {
  await Promise.all(targets.map((t) => t.stop()));
  unpin();
}
// What Cassandra burns while the echo runs is not the hop's.
for (const r of results) if (r.mode === 'hop') r.cpuCassandra = undefined;
printReport(results, { modes: options.modes, ops: options.ops, targets: options.targets, options });
console.log(`
load average at start ${loadAtStart}, at end ${loadAverage()}`);
