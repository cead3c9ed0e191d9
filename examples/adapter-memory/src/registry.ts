import { type Endpoint } from '@muster/core';
import { byId } from '@muster/core/adapter';

type Listener = (endpoints: readonly Endpoint[]) => void;

/**
 * Services by name, shared by every client in this process: what a real backend (a catalog
 * server) would hold. Each change is announced to the watchers of that service as the whole new
 * view; core's createDiscovery turns views into diff events. `outage(true)` makes every call fail,
 * as an unreachable server would, so the conformance kit's fault cases run on the example too.
 */
export class Registry {
  readonly #services = new Map<string, { byId: Map<string, Endpoint>; listeners: Set<Listener> }>();
  #down = false;

  #service(name: string) {
    let service = this.#services.get(name);
    if (!service) this.#services.set(name, (service = { byId: new Map(), listeners: new Set() }));
    return service;
  }

  get down(): boolean {
    return this.#down;
  }

  /** While on, every call through MemoryBackend fails (ECONNREFUSED); watchers see their streams break. */
  outage(on: boolean): void {
    this.#down = on;
    if (on) for (const service of this.#services.values()) for (const listener of service.listeners) listener([]);
  }

  endpoints(name: string): readonly Endpoint[] {
    return [...this.#service(name).byId.values()].sort(byId);
  }

  has(name: string, id: string): boolean {
    return this.#service(name).byId.has(id);
  }

  put(name: string, endpoint: Endpoint): void {
    this.#service(name).byId.set(endpoint.id, endpoint);
    this.#publish(name);
  }

  delete(name: string, id: string): void {
    if (this.#service(name).byId.delete(id)) this.#publish(name);
  }

  subscribe(name: string, listener: Listener): () => void {
    const service = this.#service(name);
    service.listeners.add(listener);
    return () => service.listeners.delete(listener);
  }

  #publish(name: string): void {
    if (this.#down) return;
    const endpoints = this.endpoints(name);
    for (const listener of this.#service(name).listeners) listener(endpoints);
  }
}

export const registries = new Map<string, Registry>();

export function registry(scope: string): Registry {
  let r = registries.get(scope);
  if (!r) registries.set(scope, (r = new Registry()));
  return r;
}
