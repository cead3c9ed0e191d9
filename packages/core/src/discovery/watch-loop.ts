import { backoffDelay } from '../abort.js';
import { BackendError, MusterError } from '../errors.js';
import type { DiscoveryEvent } from '../ports/discovery.js';
import type { EventChannel } from '../coordination/channel.js';
import { EndpointSet } from '../coordination/endpoint-set.js';
import { isTransient } from '../coordination/transient.js';
import type { DiscoveryBackend } from './backend.js';

/** How a watch waits after a failure: full jitter from `initialMs`, doubling up to `maxMs`. */
export interface DiscoveryBackoff {
  readonly initialMs: number;
  readonly maxMs: number;
  readonly random: () => number;
  /** Waits `ms` or until `signal` aborts; injectable so tests run the backoff without real time. */
  readonly delay: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * One watch of one service: the snapshot after the first view, then the difference of every later
 * view; when the view stream fails, one `degraded` per outage (with the last known endpoints, never
 * an empty list), a new stream after a backoff delay, and `recovered` before the first difference
 * once a view arrives again. Ends the channel when `signal` aborts; fails it when the first view
 * cannot be had for a reason retrying will not fix.
 */
export async function runWatch(
  backend: DiscoveryBackend,
  service: string,
  signal: AbortSignal,
  channel: EventChannel<DiscoveryEvent>,
  backoff: DiscoveryBackoff,
): Promise<void> {
  const state = new EndpointSet();
  let started = false;
  let degraded = false;
  const asError = (error: unknown) => (MusterError.is(error) ? error : new BackendError(backend.name, String(error), { cause: error }));
  const degrade = (error: unknown) => {
    if (degraded) return;
    degraded = true;
    channel.push({ type: 'degraded', error: asError(error), endpoints: state.endpoints });
  };

  for (let attempt = 0; !signal.aborted;) {
    try {
      for await (const view of backend.views(service, { signal })) {
        if (signal.aborted) break;
        if (!Array.isArray(view)) {
          const { error } = view as { error: unknown };
          if (!started) throw error;
          degrade(error);
          continue;
        }
        attempt = 0;
        if (!started) {
          started = true;
          state.reset(view);
          channel.push({ type: 'snapshot', endpoints: state.endpoints });
          continue;
        }
        if (degraded) {
          degraded = false;
          channel.push({ type: 'recovered', endpoints: state.endpoints });
        }
        for (const event of state.replace(view)) channel.push(event);
      }
      if (!signal.aborted) throw new BackendError(backend.name, `the ${backend.name} watch of '${service}' ended unexpectedly`);
    } catch (error) {
      if (signal.aborted) break;
      if (!started && !isTransient(error)) {
        // Wrong credentials, RBAC, a bad file: say so instead of retrying in silence.
        channel.fail(asError(error));
        return;
      }
      if (started) degrade(error);
      await backoff.delay(backoffDelay(attempt++, backoff.initialMs, backoff.maxMs, backoff.random), signal).catch(() => undefined);
    }
  }
  channel.end();
}
