// Prints a bench run: per mode and operation one table, a row per target with the median over
// rounds, ratios and added latency against the direct run. Prints only; nothing is asserted.

const median = (xs) => {
  const v = xs.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
};

// Always one space before a figure, so a figure wider than its column never merges with the last.
const fixed = (v, digits, width) => ` ${(v === undefined ? '-' : v.toFixed(digits)).padStart(width - 1)}`;
const signed = (v, width) => ` ${(v === undefined ? '-' : `${v >= 0 ? '+' : ''}${v.toFixed(3)}`).padStart(width - 1)}`;

/** Median over rounds of every figure of one target's phases. */
function summarize(phases) {
  const pick = (key) => median(phases.map((p) => p[key]));
  const keys = [
    'opsPerSec',
    'p50',
    'p99',
    'p999',
    'cpuProxy',
    'cpuCassandra',
    'cpuLoad',
    'rssMiB',
    'anonMiB',
    'peakMiB',
    'clientConns',
    'backendConns',
  ];
  const out = Object.fromEntries(keys.map((k) => [k, pick(k)]));
  out.errors = phases.reduce((s, p) => s + p.errors, 0);
  out.late = phases.reduce((s, p) => s + p.late, 0);
  out.errorSamples = phases.flatMap((p) => p.errorSamples);
  return out;
}

export function printReport(results, { modes, ops, targets, options }) {
  for (const mode of modes) {
    for (const op of ops) {
      const rows = new Map();
      for (const target of targets) {
        const all = results.filter((r) => r.mode === mode && r.op === op && r.target === target);
        const phases = all.filter((r) => !r.failed);
        if (phases.length) rows.set(target, { ...summarize(phases), failed: all.length - phases.length });
        else if (all.length) rows.set(target, { failedAll: all[0].failed });
      }
      const direct = rows.get('direct')?.failedAll ? undefined : rows.get('direct');
      const load = mode === 'saturation' ? `${options.concurrency} in flight` : `${options.rate} req/s, latency from intended send time`;
      console.log(`\n${op}s, ${mode} (${load}), median of ${options.rounds} round(s) of ${options.seconds} s`);
      console.log(
        'target      ops/s  ratio   p50 ms   p99 ms  p999 ms  +p50 ms  +p99 ms | CPU µs/req: proxy Cassandra loadgen | RSS MiB (anon, peak) | backend/client conns | errors',
      );
      for (const [name, r] of rows) {
        if (r.failedAll) {
          console.log(`${name.padEnd(10)} every round failed: ${r.failedAll}`);
          continue;
        }
        const ratio = direct ? r.opsPerSec / direct.opsPerSec : undefined;
        const added = (key) => (direct && name !== 'direct' ? r[key] - direct[key] : undefined);
        const conns = r.clientConns === undefined ? '-' : `${r.backendConns}/${r.clientConns}`;
        const rss = r.rssMiB === undefined ? '-' : `${r.rssMiB.toFixed(0)} (${r.anonMiB.toFixed(0)}, ${r.peakMiB.toFixed(0)})`;
        console.log(
          `${name.padEnd(10)}${fixed(r.opsPerSec, 0, 7)}${fixed(ratio, 3, 7)}${fixed(r.p50, 3, 9)}${fixed(r.p99, 3, 9)}${fixed(r.p999, 3, 9)}` +
            `${signed(added('p50'), 9)}${signed(added('p99'), 9)} | ${fixed(r.cpuProxy, 1, 16)}${fixed(r.cpuCassandra, 1, 10)}${fixed(r.cpuLoad, 1, 8)} |` +
            ` ${rss.padStart(20)} | ${conns.padStart(20)} | ${r.errors}${r.late ? ` (${r.late} sent >1 ms late)` : ''}` +
            `${r.failed ? `, ${r.failed} round(s) failed` : ''}`,
        );
        if (r.errorSamples.length) console.log(`           first errors: ${[...new Set(r.errorSamples)].slice(0, 3).join('; ')}`);
      }
    }
  }
}
