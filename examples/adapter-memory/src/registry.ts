import type { DiscoveryEvent, Endpoint } from '@muster/core';
import { EndpointSet } from '@muster/core/adapter';

type Listener = (events: DiscoveryEvent[]) => void;

/**
 * Services by name, shared by every client in this process: what a real backend (a catalog
 * server) would hold. Each change is announced to the watchers of that service as diff events.
 */
export class Registry {
  readonly #services = new Map<string, { set: EndpointSet; byId: Map<string, Endpoint>; listeners: Set<Listener> }>();

  #service(name: string) {
    let service = this.#services.get(name);
    if (!service) this.#services.set(name, (service = { set: new EndpointSet(), byId: new Map(), listeners: new Set() }));
    return service;
  }

  endpoints(name: string): readonly Endpoint[] {
    return this.#service(name).set.endpoints;
  }

  put(name: string, endpoint: Endpoint): void {
    const service = this.#service(name);
    service.byId.set(endpoint.id, endpoint);
    this.#publish(name);
  }

  delete(name: string, id: string): void {
    const service = this.#service(name);
    if (service.byId.delete(id)) this.#publish(name);
  }

  subscribe(name: string, listener: Listener): () => void {
    const service = this.#service(name);
    service.listeners.add(listener);
    return () => service.listeners.delete(listener);
  }

  #publish(name: string): void {
    const service = this.#service(name);
    const events = service.set.replace([...service.byId.values()]);
    for (const listener of service.listeners) listener(events);
  }
}

export const registries = new Map<string, Registry>();

export function registry(scope: string): Registry {
  let r = registries.get(scope);
  if (!r) registries.set(scope, (r = new Registry()));
  return r;
}
