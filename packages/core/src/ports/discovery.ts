import type { WaitOptions } from '../abort.js';
import type { MusterError } from '../errors.js';

/** One live instance of a service, as the backend reports it. */
export interface Endpoint {
  /** Stable identity: pod name, static id, Consul service id. Lists are sorted by it. */
  readonly id: string;
  readonly address: string;
  /** The port selected for this service (the named port, or the only one). */
  readonly port: number;
  /** Every named port the backend reports. */
  readonly ports?: Readonly<Record<string, number>>;
  /** What clients should route to. */
  readonly ready: boolean;
  /** Still able to serve (true for a terminating pod that still serves). */
  readonly serving?: boolean;
  /** On its way out; reported, not hidden. */
  readonly terminating?: boolean;
  readonly zone?: string;
  readonly dc?: string;
  readonly rack?: string;
  readonly nodeName?: string;
  readonly metadata: Readonly<Record<string, string>>;
}

/**
 * What `watch()` yields. The first item is always a `snapshot` taken after the initial list
 * completed; every later item carries the full current `endpoints` too, so a consumer that only
 * wants state never folds deltas. Changes observed together, in one backend answer, may each carry
 * the state after that change or the state after all of them; the last one always carries the
 * current state. A backend failure is `degraded` (with the last known endpoints,
 * never an empty list); `recovered` follows when the backend answers again, after which the diff
 * against the last known state is emitted as ordinary changes.
 */
export type DiscoveryEvent =
  | { readonly type: 'snapshot'; readonly endpoints: readonly Endpoint[] }
  | {
      readonly type: 'added' | 'updated' | 'removed';
      readonly endpoint: Endpoint;
      readonly endpoints: readonly Endpoint[];
    }
  | { readonly type: 'degraded'; readonly error: MusterError; readonly endpoints: readonly Endpoint[] }
  | { readonly type: 'recovered'; readonly endpoints: readonly Endpoint[] };

/** This process, as it registers itself where the backend needs it (Consul). */
export interface Registration {
  readonly service: string;
  readonly id: string;
  readonly address: string;
  readonly port: number;
  readonly ports?: Readonly<Record<string, number>>;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly tags?: readonly string[];
}

/**
 * Discovery: the live instances of a service.
 *
 * Guarantees: `list()` makes one call to the backend and leaves nothing running; its result is
 * sorted by id. `watch()` starts with a snapshot, survives backend restarts and watch expiry by
 * relisting and emitting the difference (no duplicates, no silent gaps), and ends when its signal
 * aborts or the adapter is closed.
 *
 * Not guaranteed: that every intermediate state is seen (changes that cancel out between two
 * observations may be coalesced), or that two watchers see a change at the same moment.
 */
export interface Discovery {
  /**
   * This process's own endpoint where the adapter knows it (static: `options.self`; Kubernetes:
   * the pod named by POD_NAME). Undefined where it cannot tell.
   */
  readonly self?: Endpoint | undefined;
  list(service: string, options?: WaitOptions): Promise<Endpoint[]>;
  watch(service: string, options?: WaitOptions): AsyncIterable<DiscoveryEvent>;
  /**
   * Registers this process where the backend needs it, and keeps it registered (re-registers
   * after the backend forgets it). A documented no-op where the platform registers (Kubernetes).
   */
  register(self: Registration, options?: WaitOptions): Promise<void>;
  /** Undoes `register`; a no-op when nothing is registered. */
  deregister(options?: WaitOptions): Promise<void>;
  /** Ends every watch and registration; idempotent. */
  close(): Promise<void>;
}
