// Prints a bench run: per mode and operation one table, a row per target, ratios and added latency
// against the direct run. Throughput and CPU are the median over rounds; latency percentiles are
// read from all rounds' requests pooled (latency.mjs). Prints only; nothing is asserted.
import { histogramCount, mergeHistograms, quantileMs } from './latency.mjs';

export const median = (xs) => {
  const v = xs.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

// Always one space before a figure, so a figure wider than its column never merges with the last.
const fixed = (v, digits, width) => ` ${(v === undefined ? '-' : v.toFixed(digits)).padStart(width - 1)}`;
const signed = (v, width) => ` ${(v === undefined ? '-' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`).padStart(width - 1)}`;

const MEDIAN_KEYS = [
  'routedShare',
  'opsPerSec',
  'cpuProxy',
  'cpuCassandra',
  'cpuLoad',
  'rssMiB',
  'anonMiB',
  'peakMiB',
  'clientConns',
  'backendConns',
];

/**
 * One target's phases summed up: medians over rounds, and latency percentiles of the pooled
 * histograms (the median of the rounds' own percentiles when the phases carry none).
 */
export function summarize(phases) {
  const pick = (key) => median(phases.map((p) => p[key]));
  const out = Object.fromEntries(MEDIAN_KEYS.map((k) => [k, pick(k)]));
  const pooled = mergeHistograms(phases.map((p) => p.histogram));
  out.samples = histogramCount(pooled);
  for (const [key, q] of [
    ['p50', 0.5],
    ['p99', 0.99],
    ['p999', 0.999],
  ]) {
    out[key] = out.samples > 0 ? quantileMs(pooled, q) : pick(key);
  }
  // How far the rounds' own p99s lie apart: the noise any +p99 must be read against.
  const p99s = phases.map((p) => p.p99).filter((x) => x !== undefined);
  out.p99Rounds = p99s.length > 1 ? [Math.min(...p99s), Math.max(...p99s)] : undefined;
  out.errors = phases.reduce((s, p) => s + p.errors, 0);
  out.late = phases.reduce((s, p) => s + (p.late ?? 0), 0);
  out.maxLate = Math.max(0, ...phases.map((p) => p.maxLate ?? 0));
  out.errorSamples = phases.flatMap((p) => p.errorSamples ?? []);
  out.loadAverage = phases.map((p) => p.loadAverage).filter((x) => x !== undefined);
  const loop = phases.filter((p) => p.loopDelay);
  if (loop.length) {
    out.loopDelay = Object.fromEntries(['p50', 'p99', 'p999', 'max'].map((k) => [k, median(loop.map((p) => p.loopDelay[k]))]));
    out.gc = Object.fromEntries(['count', 'ms', 'maxMs'].map((k) => [k, median(loop.map((p) => p.gc[k]))]));
  }
  return out;
}

const HEADER =
  'target      ops/s  ratio   p50 ms   p99 ms  p999 ms  +p50 ms  +p99 ms +p999 ms | CPU µs/req: proxy Cassandra loadgen | RSS MiB (anon, peak) | backend/client conns | errors, late; p99 spread';

function row(name, r, direct) {
  const ratio = direct ? r.opsPerSec / direct.opsPerSec : undefined;
  const added = (key) => (direct && name !== 'direct' && r[key] !== undefined ? r[key] - direct[key] : undefined);
  const conns = r.clientConns === undefined ? '-' : `${r.backendConns}/${r.clientConns}`;
  const rss = r.rssMiB === undefined ? '-' : `${r.rssMiB.toFixed(0)} (${r.anonMiB.toFixed(0)}, ${r.peakMiB.toFixed(0)})`;
  const late = r.late ? ` (${r.late} sent >1 ms late, at most ${r.maxLate.toFixed(1)} ms)` : '';
  const routed = r.routedShare === undefined ? '' : `; ${(r.routedShare * 100).toFixed(1)} % of EXECUTEs to a replica`;
  const rounds = r.p99Rounds ? `; p99 of the rounds ${r.p99Rounds[0].toFixed(1)}–${r.p99Rounds[1].toFixed(1)} ms` : '';
  return (
    `${name.padEnd(10)}${fixed(r.opsPerSec, 0, 7)}${fixed(ratio, 3, 7)}${fixed(r.p50, 3, 9)}${fixed(r.p99, 3, 9)}${fixed(r.p999, 3, 9)}` +
    `${signed(added('p50'), 9)}${signed(added('p99'), 9)}${signed(added('p999'), 9)} | ${fixed(r.cpuProxy, 1, 16)}${fixed(r.cpuCassandra, 1, 10)}${fixed(r.cpuLoad, 1, 8)} |` +
    ` ${rss.padStart(20)} | ${conns.padStart(20)} | ${r.errors}${late}${r.failed ? `, ${r.failed} round(s) failed` : ''}${rounds}${routed}`
  );
}

function loopLine(r) {
  const d = r.loopDelay;
  const f = (v) => v.toFixed(3);
  return (
    `           proxy event loop late p50 ${f(d.p50)} / p99 ${f(d.p99)} / p999 ${f(d.p999)} / max ${f(d.max)} ms; ` +
    `GC ${r.gc.count} pauses, ${r.gc.ms.toFixed(1)} ms, longest ${r.gc.maxMs.toFixed(2)} ms per window (medians over rounds)`
  );
}

/** The rows of one mode and operation: a summary per target, or why every round of it failed. */
function rowsOf(results, mode, op, targets) {
  const rows = new Map();
  for (const target of targets) {
    const all = results.filter((r) => r.mode === mode && r.op === op && r.target === target);
    const phases = all.filter((r) => !r.failed);
    if (phases.length) rows.set(target, { ...summarize(phases), failed: all.length - phases.length });
    else if (all.length) rows.set(target, { failedAll: all[0].failed });
  }
  return rows;
}

export function printReport(results, { modes, ops, targets, options }) {
  const hop = results.filter((r) => r.mode === 'hop' && !r.failed);
  const hopRow = hop.length ? summarize(hop) : undefined;
  for (const mode of modes) {
    for (const op of ops) {
      const rows = rowsOf(results, mode, op, targets);
      const direct = rows.get('direct')?.failedAll ? undefined : rows.get('direct');
      const load = mode === 'saturation' ? `${options.concurrency} in flight` : `${options.rate} req/s, latency from intended send time`;
      const loads = [...rows.values()].flatMap((r) => r.loadAverage ?? []);
      const samples = [...rows.values()].map((r) => r.samples).filter(Boolean);
      console.log(
        `\n${op}s, ${mode} (${load}), ${options.rounds} round(s): ops/s and CPU median over rounds, percentiles of ` +
          `${samples.length ? `${Math.min(...samples)}+ requests pooled per target` : 'the rounds (median)'}` +
          (loads.length ? `; load average ${median(loads).toFixed(1)} (max ${Math.max(...loads).toFixed(1)})` : ''),
      );
      console.log(HEADER);
      for (const [name, r] of rows) {
        if (r.failedAll) {
          console.log(`${name.padEnd(10)} every round failed: ${r.failedAll}`);
          continue;
        }
        console.log(row(name, r, direct));
        if (r.loopDelay) console.log(loopLine(r));
        if (r.errorSamples.length) console.log(`           first errors: ${[...new Set(r.errorSamples)].slice(0, 3).join('; ')}`);
      }
      if (mode === 'rate' && hopRow)
        console.log(`${row('1 hop', hopRow, undefined)}   <- one loopback round trip (Go echo on the proxy's core)`);
    }
  }
}
