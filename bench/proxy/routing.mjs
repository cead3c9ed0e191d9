// Which node the Muster proxy sent the prepared EXECUTEs of a window to, from its own counter
// (muster_proxy_routed_executes_total{path}): a Cassandra CPU per request equal to direct's is
// explained only if (nearly) every one went to a replica of its partition.

/** The counter's values by path, from a Prometheus text exposition. */
export function routedExecutes(metricsText) {
  const counts = { replica: 0, ordinary: 0 };
  for (const m of metricsText.matchAll(/^muster_proxy_routed_executes_total\{path="(replica|ordinary)"\} (\S+)$/gm)) {
    counts[m[1]] = Number(m[2]);
  }
  return counts;
}

/** The share of a window's EXECUTEs routed to a replica (0..1); undefined when there were none. */
export function replicaShare(before, after) {
  if (!before || !after) return undefined;
  const replica = after.replica - before.replica;
  const total = replica + after.ordinary - before.ordinary;
  return total > 0 ? replica / total : undefined;
}
