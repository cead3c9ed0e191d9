import { anySignal, sleep, throwIfAborted, type WaitOptions } from '../abort.js';
import { ClosedError, InvalidArgumentError } from '../errors.js';
import type { Discovery, DiscoveryEvent, Endpoint, Registration } from '../ports/discovery.js';
import { EventChannel } from '../coordination/channel.js';
import { byId } from '../coordination/endpoint-set.js';
import type { DiscoveryBackend } from './backend.js';
import { keepRegistered } from './registration-keeper.js';
import { runWatch, type DiscoveryBackoff } from './watch-loop.js';

export interface DiscoveryClientOptions {
  /** Backoff after a failed view stream (default 0.8 s → 30 s, full jitter). */
  readonly backoff?: Partial<DiscoveryBackoff>;
  /** How long close() gives deregistration before it closes anyway (ms; default 5 s). */
  readonly deregisterTimeout?: number;
}

/** Builds the Discovery port on a backend: the same list / watch / register semantics for every adapter. */
export function createDiscovery(backend: DiscoveryBackend, options: DiscoveryClientOptions = {}): Discovery {
  return new DiscoveryClient(backend, options);
}

interface Registered {
  readonly registration: Registration;
  readonly stop: AbortController;
  readonly keeper: Promise<void>;
}

class DiscoveryClient implements Discovery {
  readonly #backend: DiscoveryBackend;
  readonly #backoff: DiscoveryBackoff;
  readonly #deregisterTimeout: number;
  readonly #closing = new AbortController();
  readonly #watches = new Set<Promise<void>>();
  #registered: Registered | undefined;
  /** A register() whose backend call has not settled: close() waits for it and what follows it. */
  #registering: Promise<unknown> | undefined;
  #closed: Promise<void> | undefined;

  constructor(backend: DiscoveryBackend, options: DiscoveryClientOptions) {
    this.#backend = backend;
    this.#backoff = {
      initialMs: options.backoff?.initialMs ?? 800,
      maxMs: options.backoff?.maxMs ?? 30_000,
      random: options.backoff?.random ?? Math.random,
      delay: options.backoff?.delay ?? ((ms, signal) => sleep(ms, signal)),
    };
    this.#deregisterTimeout = options.deregisterTimeout ?? 5000;
  }

  get self(): Endpoint | undefined {
    return this.#backend.self;
  }

  #signal(options?: WaitOptions): AbortSignal {
    if (this.#closing.signal.aborted) throw new ClosedError(`${this.#backend.name} discovery`);
    return anySignal(options?.signal, this.#closing.signal);
  }

  async list(service: string, options?: WaitOptions): Promise<Endpoint[]> {
    const signal = this.#signal(options);
    throwIfAborted(signal, 'list()');
    // One backend call and nothing left running: serverless callers list and return.
    return [...(await this.#backend.list(service, { signal }))].sort(byId);
  }

  watch(service: string, options?: WaitOptions): AsyncIterable<DiscoveryEvent> {
    const stop = new AbortController();
    const signal = anySignal(this.#signal(options), stop.signal);
    const channel = new EventChannel<DiscoveryEvent>(() => stop.abort(), signal);
    const running = runWatch(this.#backend, service, signal, channel, this.#backoff)
      .catch((error: unknown) => channel.fail(error))
      .finally(() => this.#watches.delete(running));
    this.#watches.add(running);
    return channel;
  }

  async register(self: Registration, options?: WaitOptions): Promise<void> {
    const signal = this.#signal(options);
    const backend = this.#backend.registration;
    // Kubernetes and static: the platform or the config is the registration.
    if (!backend) return;
    if (!self.service || !self.id) throw new InvalidArgumentError('register(): service and id must be non-empty');
    if (this.#registered && this.#registered.registration.id !== self.id) await this.deregister(options);
    else await this.#stopKeeper();
    const call = backend.register(self, { signal });
    this.#registering = call.catch(async () => {
      // Aborted or cut off once sent, it may have been applied: take it back, or it stays listed
      // (on Consul until deregisterCriticalAfter) with nobody keeping it.
      if (signal.aborted) await backend.deregister(self, { signal: AbortSignal.timeout(this.#deregisterTimeout) }).catch(() => undefined);
    });
    await call; // on failure #registering stays: close() waits for the take-back
    this.#registering = undefined;
    const stop = new AbortController();
    const keeper = keepRegistered(backend, self, anySignal(stop.signal, this.#closing.signal));
    this.#registered = { registration: self, stop, keeper };
  }

  async #stopKeeper(): Promise<void> {
    const r = this.#registered;
    if (!r) return;
    r.stop.abort();
    await r.keeper;
  }

  /** Forgets the registration only once the backend has taken it back: a failed or aborted call leaves it to close(). */
  async deregister(options?: WaitOptions): Promise<void> {
    const r = this.#registered;
    if (!r) return;
    throwIfAborted(options?.signal, 'deregister()');
    await this.#stopKeeper();
    await this.#backend.registration!.deregister(r.registration, {
      signal: anySignal(options?.signal, AbortSignal.timeout(this.#deregisterTimeout)),
    });
    if (this.#registered === r) this.#registered = undefined;
  }

  /** Every call resolves once the first one has deregistered and closed. */
  close(): Promise<void> {
    return (this.#closed ??= this.#close());
  }

  async #close(): Promise<void> {
    this.#closing.abort(new ClosedError(`${this.#backend.name} discovery`));
    // A registration still being sent is taken back by register() itself, once its call settles.
    await this.#registering;
    // Deregistering first means peers stop routing here before this process goes away.
    const deregistered = this.#registered ? this.deregister().catch(() => undefined) : Promise.resolve();
    await Promise.allSettled([deregistered, ...this.#watches]);
    await this.#backend.close?.();
  }
}
