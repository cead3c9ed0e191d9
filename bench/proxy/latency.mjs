// Latency percentiles of several rounds pooled: each generator run reports a histogram (µs floored
// to 8 significant bits, see load/main.go), and a target's rounds are merged before percentiles are
// read, so a p99 rests on every round's requests instead of being a median of few-sample p99s.

/** Merges histograms ([[µs, count], ...]) into one, sorted by latency. */
export function mergeHistograms(histograms) {
  const counts = new Map();
  for (const histogram of histograms) {
    for (const [us, count] of histogram ?? []) counts.set(us, (counts.get(us) ?? 0) + count);
  }
  return [...counts].sort((a, b) => a[0] - b[0]);
}

/** Requests counted in a histogram. */
export const histogramCount = (histogram) => histogram.reduce((sum, [, count]) => sum + count, 0);

/**
 * The q-quantile in ms: the latency of the request at index ⌊n·q⌋ in sorted order (the rule the
 * generator uses for one run's figures); undefined for an empty histogram.
 */
export function quantileMs(histogram, q) {
  const n = histogramCount(histogram);
  if (n === 0) return undefined;
  const index = Math.min(n - 1, Math.floor(n * q));
  let seen = 0;
  for (const [us, count] of histogram) {
    seen += count;
    if (seen > index) return us / 1000;
  }
  return undefined;
}
