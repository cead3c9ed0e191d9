import type { DiscoveryEvent, Endpoint } from '../ports/discovery.js';

export function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Deep equality for the plain JSON-like records endpoints and payloads are. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * The current endpoints of one watched service. `replace()` takes a full new view (a relist, a
 * resync, a blocking-query answer) and returns the change events that lead from the old view to
 * it, each carrying the snapshot as it stands after that change. Adapters feed it whole views, so
 * a missed backend event heals at the next view.
 */
export class EndpointSet {
  #byId = new Map<string, Endpoint>();
  #sorted: readonly Endpoint[] = [];

  get endpoints(): readonly Endpoint[] {
    return this.#sorted;
  }

  replace(next: readonly Endpoint[]): DiscoveryEvent[] {
    const incoming = new Map<string, Endpoint>();
    for (const e of next) incoming.set(e.id, e);
    const events: DiscoveryEvent[] = [];
    const current = new Map(this.#byId);
    const emit = (type: 'added' | 'updated' | 'removed', endpoint: Endpoint) => {
      if (type === 'removed') current.delete(endpoint.id);
      else current.set(endpoint.id, endpoint);
      events.push({ type, endpoint, endpoints: [...current.values()].sort(byId) });
    };
    for (const old of [...this.#byId.values()].sort(byId)) if (!incoming.has(old.id)) emit('removed', old);
    for (const e of [...incoming.values()].sort(byId)) {
      const old = this.#byId.get(e.id);
      if (!old) emit('added', e);
      else if (!sameValue(old, e)) emit('updated', e);
    }
    this.#byId = current;
    this.#sorted = [...current.values()].sort(byId);
    return events;
  }
}
