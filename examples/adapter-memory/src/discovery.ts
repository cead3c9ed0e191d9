import { type Endpoint, type Registration } from '@muster/core';
import { EventChannel, type DiscoveryBackend, type DiscoveryCallOptions, type RegistrationBackend } from '@muster/core/adapter';
import type { Registry } from './registry.js';

const unreachable = () => Object.assign(new Error('memory registry unreachable (outage)'), { code: 'ECONNREFUSED' });

/**
 * A Discovery backend over the in-process registry: all a third-party adapter writes. core's
 * createDiscovery builds the port on it (snapshot, diffs, degraded / recovered, backoff, keeping
 * the registration alive).
 */
export class MemoryBackend implements DiscoveryBackend {
  readonly name = 'memory';
  readonly #registry: Registry;
  #registered: Registration | undefined;
  readonly registration: RegistrationBackend;

  constructor(registry: Registry, options: { renewInterval: number }) {
    this.#registry = registry;
    const check = () => {
      if (registry.down) throw unreachable();
    };
    this.registration = {
      renewInterval: options.renewInterval,
      register: async (self) => {
        check();
        this.#registered = self;
        registry.put(self.service, {
          id: self.id,
          address: self.address,
          port: self.port,
          ...(self.ports ? { ports: self.ports } : {}),
          ready: true,
          metadata: { ...self.metadata },
        });
      },
      // The registry forgets only when told to (a test playing an operator): report it, core re-registers.
      renew: async (self) => (check(), registry.has(self.service, self.id)),
      deregister: async (self) => {
        this.#registered = undefined;
        check();
        registry.delete(self.service, self.id);
      },
    };
  }

  get self(): Endpoint | undefined {
    const r = this.#registered;
    return r && this.#registry.endpoints(r.service).find((e) => e.id === r.id);
  }

  async list(service: string): Promise<readonly Endpoint[]> {
    if (this.#registry.down) throw unreachable();
    return this.#registry.endpoints(service);
  }

  async *views(service: string, { signal }: DiscoveryCallOptions): AsyncGenerator<readonly Endpoint[]> {
    let unsubscribe = () => {};
    const changes = new EventChannel<readonly Endpoint[]>(() => unsubscribe(), signal);
    const off = this.#registry.subscribe(service, (endpoints) => changes.push(endpoints));
    unsubscribe = () => void off();
    try {
      yield await this.list(service);
      for await (const endpoints of changes) {
        if (this.#registry.down) throw unreachable();
        yield endpoints;
      }
    } finally {
      changes.end();
    }
  }
}
