import type { Endpoint, Registration } from '../ports/discovery.js';

/**
 * One item of a backend's view stream: every endpoint of the service as the backend sees it now,
 * or an error for an observation that failed while the stream itself goes on (a half-written
 * members file that the next write will fix).
 */
export type DiscoveryView = readonly Endpoint[] | { readonly error: unknown };

export interface DiscoveryCallOptions {
  /** Aborts the call: the caller gave up, the watch ended or the port closed. Honour it. */
  readonly signal: AbortSignal;
}

/**
 * Where the backend keeps registrations it is told about (Consul's agent, an in-process registry).
 * Absent where the platform registers instances itself (Kubernetes) or membership is the
 * configuration (static): the port's register() is then a documented no-op.
 */
export interface RegistrationBackend {
  register(self: Registration, options: DiscoveryCallOptions): Promise<void>;
  /**
   * Keeps the registration alive (passes a TTL check) and reports whether the backend still has
   * it: false when it forgot (an agent restart, an operator's deregister), and core registers
   * again. Without it, register() is one call and nothing runs afterwards.
   */
  renew?(self: Registration, options: DiscoveryCallOptions): Promise<boolean>;
  /** Time between two renewals (ms; default 10 s). */
  readonly renewInterval?: number;
  deregister(self: Registration, options: DiscoveryCallOptions): Promise<void>;
}

/**
 * The small surface a Discovery adapter implements; `createDiscovery` builds the port on it
 * (snapshot, degraded once per outage, recovered, diffs, backoff, registration kept alive, close),
 * so every adapter behaves the same.
 *
 * Errors: a failure before the first view is retried only when `isTransient()` accepts it (wrong
 * credentials or a bad file fail the watch at once, with the error); after the first view every
 * failure is `degraded` and retried with backoff.
 */
export interface DiscoveryBackend {
  /** Names the backend in errors: 'kubernetes', 'consul', 'static'. */
  readonly name: string;
  /** This process's endpoint where the backend knows it (see Discovery.self). */
  readonly self?: Endpoint | undefined;
  /** One call to the backend: the endpoints of `service` now, in any order. */
  list(service: string, options: DiscoveryCallOptions): Promise<readonly Endpoint[]>;
  /**
   * Whole views of `service`: the first once the initial list completed, then one each time it
   * may have changed (a watch event, a blocking-query answer, a file change, a resync; a view equal
   * to the last one is fine, core emits only differences). The stream runs until `signal` aborts;
   * throwing (or ending) means it broke, and core starts a new one after a backoff delay, so a
   * new stream must begin with a fresh full view (a relist).
   */
  views(service: string, options: DiscoveryCallOptions): AsyncIterable<DiscoveryView>;
  readonly registration?: RegistrationBackend;
  /** Releases connections; called once by the port's close(), after every watch ended. */
  close?(): Promise<void>;
}
