import { systemClock, type Clock } from '../clock.js';
import type { DiscoveryEvent, Endpoint } from '../ports/discovery.js';
import { EndpointSet } from './endpoint-set.js';

export interface DebounceOptions {
  /** Changes are held until nothing has changed for this long (ms). */
  readonly quietPeriod: number;
  /** ...but never longer than this after the first held change (ms), so churn cannot starve consumers. */
  readonly maxDelay: number;
  /** Removals skip the wait (default true): a gone endpoint should stop receiving traffic now. */
  readonly removalsImmediate?: boolean;
  /** Measures the delays (default systemClock, monotonic: a wall-clock step cannot stall or rush a flush). */
  readonly clock?: Clock;
}

/**
 * Coalesces a watch: an endpoint that appears and vanishes (or flips ready and back) within the
 * quiet period produces no event at all. The first snapshot passes at once; degraded/recovered
 * pass at once after a flush. Output events are the diff from the last emitted state.
 */
export async function* debounceDiscovery(source: AsyncIterable<DiscoveryEvent>, options: DebounceOptions): AsyncGenerator<DiscoveryEvent> {
  const emitted = new EndpointSet();
  const iterator = source[Symbol.asyncIterator]();
  let latest: readonly Endpoint[] | undefined;
  let firstHeldAt: number | undefined;
  let next: Promise<IteratorResult<DiscoveryEvent>> | undefined;
  const removalsImmediate = options.removalsImmediate ?? true;
  const clock = options.clock ?? systemClock;
  let started = false;

  const flush = (): DiscoveryEvent[] => {
    firstHeldAt = undefined;
    if (!latest) return [];
    const events = emitted.replace(latest);
    latest = undefined;
    return events;
  };

  try {
    for (;;) {
      next ??= iterator.next();
      let result: IteratorResult<DiscoveryEvent> | 'timeout';
      if (firstHeldAt === undefined) {
        result = await next;
      } else {
        const wait = Math.max(0, Math.min(options.quietPeriod, firstHeldAt + options.maxDelay - clock.now()));
        let timer: NodeJS.Timeout | undefined;
        result = await Promise.race([next, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), wait)))]);
        clearTimeout(timer);
      }
      if (result === 'timeout') {
        yield* flush();
        continue;
      }
      next = undefined;
      if (result.done) {
        yield* flush();
        return;
      }
      const event = result.value;
      if (!started && event.type === 'snapshot') {
        started = true;
        emitted.replace(event.endpoints);
        yield event;
        continue;
      }
      if (event.type === 'degraded' || event.type === 'recovered') {
        yield* flush();
        yield event;
        continue;
      }
      latest = event.endpoints;
      firstHeldAt ??= clock.now();
      if ((removalsImmediate && event.type === 'removed') || clock.now() - firstHeldAt >= options.maxDelay) yield* flush();
    }
  } finally {
    await iterator.return?.();
  }
}
