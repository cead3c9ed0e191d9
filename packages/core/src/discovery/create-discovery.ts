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
    await backend.register(self, { signal });
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

  async deregister(options?: WaitOptions): Promise<void> {
    const r = this.#registered;
    if (!r) return;
    await this.#stopKeeper();
    this.#registered = undefined;
    throwIfAborted(options?.signal, 'deregister()');
    await this.#backend.registration!.deregister(r.registration, {
      signal: anySignal(options?.signal, AbortSignal.timeout(this.#deregisterTimeout)),
    });
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new ClosedError(`${this.#backend.name} discovery`));
    // Deregistering first means peers stop routing here before this process goes away.
    const deregistered = this.#registered ? this.deregister().catch(() => undefined) : Promise.resolve();
    await Promise.allSettled([deregistered, ...this.#watches]);
    await this.#backend.close?.();
  }
}
