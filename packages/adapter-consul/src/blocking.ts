import { sleep } from '@muster/core/adapter';
import type { ConsulResponse } from './client.js';

export interface BlockingOptions {
  readonly signal: AbortSignal;
  /** How long one blocking query may wait (ms); every answer is a full view, so this is also the resync period. */
  readonly wait: number;
  /** Least time between two queries (ms), so an index that changes constantly cannot spin the loop. */
  readonly minInterval?: number;
}

/**
 * Consul blocking queries as a stream of full views: the first answer, then each answer whose
 * X-Consul-Index differs from the last one.
 *
 * The index rules from Consul's docs, and why: an index that goes backwards means the servers
 * lost or restored state (a restart, a snapshot restore), so the view is taken as new and the
 * next query blocks from the new index; an index of 0 (or none) is never waited on, because
 * Consul answers such a query at once and the loop would spin. Errors end the stream; the caller
 * restarts it, and a restarted stream begins with a non-blocking query, because after a restart
 * the servers' index may be below ours and a blocking query would then sleep through changes.
 */
export async function* blockingViews<T>(
  query: (index: bigint | undefined, wait: number) => Promise<ConsulResponse<T>>,
  options: BlockingOptions,
): AsyncGenerator<ConsulResponse<T>> {
  const minInterval = options.minInterval ?? 100;
  let index: bigint | undefined;
  let lastQuery = 0;
  for (;;) {
    const since = Date.now() - lastQuery;
    if (since < minInterval) await sleep(minInterval - since, options.signal);
    lastQuery = Date.now();
    const res = await query(index, options.wait);
    const next = res.index !== undefined && res.index > 0n ? res.index : 1n;
    const changed = index === undefined || next !== index;
    index = next;
    if (changed) yield res;
  }
}
