// The fixed rate of rate mode. A rate near the backend's saturation measures its queueing (every
// stall of a busy JVM grows a queue that all later requests wait in), which drowns what a proxy
// adds. So the bench first sweeps direct over rising rates to find the knee, the highest rate
// whose latency stays near the idle one, and runs the fixed-rate phases well below it.

/** Rates of the sweep: `from`, then ×`factor` each step, up to `to`. */
export function sweepRates({ from = 200, factor = 1.5, to = 20_000 } = {}) {
  const rates = [];
  for (let rate = from; rate <= to; rate = Math.round(rate * factor)) rates.push(rate);
  return rates;
}

/**
 * Whether a sweep step is below the knee: it completed what was offered (≥ 97 %) and its p99 is
 * at most `p99Factor` × the idle p99 plus `slackMs`: on a shared machine the idle p99 itself is
 * ~1 ms of scheduling noise, which the slack absorbs. The idle p99 is the lowest of the steps so
 * far, not the first one's: the first step also pays for the JVMs' warm-up (measured: p99 23.5 ms
 * at 200 req/s, then 11.3 ms at 450), and a bar set by it let the sweep run on to 5,130 req/s.
 */
export function belowKnee(step, idleP99, { p99Factor = 2, slackMs = 1 } = {}) {
  return step.errors === 0 && step.opsPerSec >= 0.97 * step.rate && step.p99 <= idleP99 * p99Factor + slackMs;
}

/** The knee of measured steps (in rising rate order): the last step before the first one above it. */
export function kneeOf(steps, criteria) {
  let knee;
  let idleP99 = Infinity;
  for (const step of steps) {
    idleP99 = Math.min(idleP99, step.p99);
    if (!belowKnee(step, idleP99, criteria)) break;
    knee = step.rate;
  }
  return knee;
}

/**
 * Runs `measure(rate)` (resolving { rate, opsPerSec, p99, errors }) over the sweep until a step is
 * above the knee; returns the steps measured and the knee (undefined: even the first step was not
 * below it, the backend is overloaded as it is).
 */
export async function findKnee(measure, sweep = sweepRates(), criteria = undefined) {
  const steps = [];
  for (const rate of sweep) {
    steps.push(await measure(rate));
    if (kneeOf(steps, criteria) !== rate) break;
  }
  return { steps, knee: kneeOf(steps, criteria) };
}

/** The fixed rate for a knee: `headroom` of it, rounded to 10 req/s (at least 10). */
export const rateBelowKnee = (knee, headroom) => Math.max(10, Math.round((knee * headroom) / 10) * 10);
