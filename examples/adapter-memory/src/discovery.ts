import { ClosedError, type Discovery, type DiscoveryEvent, type Endpoint, type Registration, type WaitOptions } from '@muster/core';
import { anySignal, EventChannel } from '@muster/core/adapter';
import type { Registry } from './registry.js';

/** Discovery over the in-process registry; `register` puts this process in it, `close` takes it out. */
export class MemoryDiscovery implements Discovery {
  readonly #registry: Registry;
  readonly #closing = new AbortController();
  #registered: Registration | undefined;

  constructor(registry: Registry) {
    this.#registry = registry;
  }

  get self(): Endpoint | undefined {
    const r = this.#registered;
    return r && this.#registry.endpoints(r.service).find((e) => e.id === r.id);
  }

  async list(service: string): Promise<Endpoint[]> {
    this.#checkOpen();
    return [...this.#registry.endpoints(service)];
  }

  watch(service: string, options?: WaitOptions): AsyncIterable<DiscoveryEvent> {
    this.#checkOpen();
    const signal = anySignal(options?.signal, this.#closing.signal);
    let unsubscribe = () => {};
    const channel = new EventChannel<DiscoveryEvent>(() => unsubscribe(), signal);
    channel.push({ type: 'snapshot', endpoints: this.#registry.endpoints(service) });
    const off = this.#registry.subscribe(service, (events) => events.forEach((e) => channel.push(e)));
    unsubscribe = () => void off();
    if (channel.stopped) off();
    return channel;
  }

  async register(self: Registration): Promise<void> {
    this.#checkOpen();
    this.#registered = self;
    this.#registry.put(self.service, {
      id: self.id,
      address: self.address,
      port: self.port,
      ...(self.ports ? { ports: self.ports } : {}),
      ready: true,
      metadata: { ...self.metadata },
    });
  }

  async deregister(): Promise<void> {
    if (!this.#registered) return;
    this.#registry.delete(this.#registered.service, this.#registered.id);
    this.#registered = undefined;
  }

  async close(): Promise<void> {
    await this.deregister();
    this.#closing.abort(new ClosedError('memory discovery'));
  }

  #checkOpen(): void {
    if (this.#closing.signal.aborted) throw new ClosedError('memory discovery');
  }
}
