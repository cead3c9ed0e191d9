// Where the Muster proxy's memory and GC time go, and what V8 flags change: the proxy started
// fresh per variant of node flags, its memory read idle and after a fixed-rate load, GC time from
// a preloaded probe (memory-probe.cjs). Variants interleaved over rounds. Prints; never asserts.
//   npx tsc -b && node bench/proxy/memory.mjs [--rate 2000] [--seconds 10] [--rounds 2]
//     [--variants 'default|--max-semi-space-size=1|--min-semi-space-size=16']
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readState } from '../../scripts/testenv/state.mjs';
import { runPhase, setupKeyspace } from './phase.mjs';
import { cleanUpOnSignal, planPinning, pinProcesses } from './pinning.mjs';
import { memory } from './procfs.mjs';
import { startMuster } from './targets.mjs';
import { cqlLoad } from './tools.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '2' },
    op: { type: 'string', default: 'read' },
    variants: { type: 'string', default: 'default|--max-semi-space-size=1|--min-semi-space-size=16' },
    'no-pin': { type: 'boolean', default: false },
  },
});
const cassandra = readState().cassandra;
if (!cassandra) throw new Error('start Cassandra first: npm run testenv -- up cassandra');
const options = {
  keys: 10000,
  concurrency: 32,
  rate: Number(values.rate),
  seconds: Number(values.seconds),
  warmup: 1,
  tokenAware: true,
  seed: 1,
};
const variants = values.variants.split('|').map((v) => v.trim());
const bin = await cqlLoad();
await setupKeyspace(bin, cassandra, options.keys);
const pinning = planPinning(values['no-pin'] ? 'off' : 'split');
const unpin = pinProcesses(
  cassandra.nodes.map((n) => n.pid),
  pinning.backend,
);
let running;
cleanUpOnSignal(() => {
  running?.kill();
  unpin();
});
const dir = mkdtempSync(join(tmpdir(), 'muster-bench-memory-'));
const rows = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const variant of variants) {
      const file = join(dir, `probe-${round}-${rows.length}.json`);
      const probe = () => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);
      const nodeArgs = `--require ${join(here, 'memory-probe.cjs')} ${variant === 'default' ? '' : variant}`;
      const target = await startMuster(cassandra, pinning.proxy, { nodeArgs, env: { ...process.env, MUSTER_BENCH_PROBE_FILE: file } });
      running = target;
      try {
        await sleep(2000); // let start-up work (first membership round, backend pool) finish before reading "idle"
        const idle = { ...memory(target.pid), probe: probe() };
        const r = await runPhase({
          bin,
          target,
          cassandra,
          mode: 'rate',
          op: values.op,
          options,
          cpus: pinning.load,
          round,
          sampleExtra: probe,
        });
        rows.push({ variant, idle, r, loaded: memory(target.pid) });
        console.error(
          `  round ${round + 1} ${variant}: ${r.cpuProxy?.toFixed(1)} µs/req, anon ${rows.at(-1).loaded.anonMiB.toFixed(1)} MiB`,
        );
      } finally {
        await target.stop();
      }
    }
  }
} finally {
  unpin();
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
console.log(
  `bench/proxy/memory: Muster proxy, ${options.rate} ${values.op}s/s for ${options.seconds} s per variant, median of ${values.rounds} round(s); pinning: ${pinning.why}`,
);
console.log(
  'variant                          idle RSS (anon) MiB | loaded RSS (anon) MiB | heap total (new, old) MiB | GC ms per 1k req  GC % of CPU | CPU µs/req',
);
for (const variant of variants) {
  const mine = rows.filter((x) => x.variant === variant);
  const m = (f) => median(mine.map(f));
  const gcMs = (x) => x.r.extraAfter.gc.ms - x.r.extraBefore.gc.ms;
  const cpuMs = (x) => x.r.extraAfter.cpuMs - x.r.extraBefore.cpuMs;
  console.log(
    `${variant.padEnd(32)} ${m((x) => x.idle.rssMiB)
      .toFixed(1)
      .padStart(8)} (${m((x) => x.idle.anonMiB).toFixed(1)})      |` +
      ` ${m((x) => x.loaded.rssMiB)
        .toFixed(1)
        .padStart(10)} (${m((x) => x.loaded.anonMiB).toFixed(1)})     |` +
      ` ${m((x) => x.r.extraAfter.heapTotal)
        .toFixed(1)
        .padStart(10)} (${m((x) => x.r.extraAfter.newSpace).toFixed(1)}, ${m((x) => x.r.extraAfter.oldSpace).toFixed(1)})     |` +
      ` ${m((x) => (gcMs(x) * 1000) / x.r.completed)
        .toFixed(1)
        .padStart(16)} ${m((x) => (100 * gcMs(x)) / cpuMs(x))
        .toFixed(1)
        .padStart(12)} |` +
      ` ${m((x) => x.r.cpuProxy)
        .toFixed(1)
        .padStart(10)}`,
  );
}
