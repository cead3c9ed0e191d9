// The side-by-side proxy benchmark: one gocql load generator (./load) against Cassandra direct,
// the Muster proxy and datastax/cql-proxy, in one run with rounds interleaved, in saturation and
// fixed-rate modes, reads and writes. Prints; never asserts. See README.md for what each figure is.
//   npm run testenv -- up cassandra cassandra3 && npx tsc -b && node bench/proxy/run.mjs [--nodes 3] [--help]
import { readState } from '../../scripts/testenv/state.mjs';
import { parseBenchArgs, usage } from './args.mjs';
import { cleanUpOnSignal, pinProcesses, planPinning } from './pinning.mjs';
import { runPhase, setupKeyspace } from './phase.mjs';
import { printReport } from './report.mjs';
import { directTarget, startCqlProxy, startMuster } from './targets.mjs';
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
const unpin = pinProcesses(cassandraPids, pinning.backend);
const targets = [];
const results = [];
cleanUpOnSignal(() => {
  for (const t of targets) t.kill?.();
  unpin();
});
try {
  for (const name of options.targets) {
    if (name === 'direct' || name === 'direct-rr') targets.push(directTarget(cassandra, name));
    if (name === 'muster') targets.push(await startMuster(cassandra, pinning.front));
    if (name === 'cql-proxy') targets.push(await startCqlProxy(cqlProxyBin, cassandra, pinning.front));
  }
  console.log(
    `bench/proxy: ${server} (${cassandra.nodes.length} node(s), Cassandra ${cassandra.version}, keyspace muster_bench RF 1, ${options.keys} keys), ` +
      `gocql v4 load generator (token-aware ${options.tokenAware ? 'on' : 'off'})` +
      (cqlProxyBin ? `, datastax/cql-proxy ${datastaxCqlProxyVersion()} with its defaults` : ''),
  );
  console.log(
    `pinning: ${pinning.why} (Cassandra pids ${cassandraPids.join(', ')}; proxy pids ${targets.flatMap((t) => (t.pid ? [`${t.name} ${t.pid}`] : [])).join(', ')})`,
  );
  console.log(`seed ${options.seed} (replay: --seed ${options.seed} or BENCH_SEED=${options.seed})`);
  for (let round = 0; round < options.rounds; round++) {
    // Each round starts with a different target, so none always runs first (cold) or last.
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const mode of options.modes) {
      for (const op of options.ops) {
        for (const target of order) {
          const label = `round ${round + 1} ${mode} ${op} ${target.name}`;
          try {
            const r = await runPhase({ bin, target, cassandra, mode, op, options, cpus: pinning.front, round });
            results.push(r);
            console.error(`  ${label}: ${r.opsPerSec.toFixed(0)} ops/s, p99 ${r.p99.toFixed(3)} ms`);
          } catch (error) {
            // One failed phase (a target refusing connections under overload) must not lose the run.
            results.push({ target: target.name, mode, op, failed: error.message });
            console.error(`  ${label}: FAILED ${error.message}`);
          }
        }
      }
    }
  }
} finally {
  await Promise.all(targets.map((t) => t.stop()));
  unpin();
}
printReport(results, { modes: options.modes, ops: options.ops, targets: options.targets, options });
