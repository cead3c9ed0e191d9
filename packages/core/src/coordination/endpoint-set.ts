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
 * it. Every event of one call carries the same snapshot: the state after the whole view was
 * applied (one sort per view, not one per change, so a 10k-endpoint relist stays linear-ish).
 * Adapters feed it whole views, so a missed backend event heals at the next view.
 */
export class EndpointSet {
  #byId = new Map<string, Endpoint>();
  #sorted: readonly Endpoint[] = [];

  get endpoints(): readonly Endpoint[] {
    return this.#sorted;
  }

  /** Sets the state without reporting changes (the first view of a watch is a snapshot). */
  reset(next: readonly Endpoint[]): void {
    this.#byId = new Map(next.map((e) => [e.id, e]));
    this.#sorted = [...this.#byId.values()].sort(byId);
  }

  replace(next: readonly Endpoint[]): DiscoveryEvent[] {
    const incoming = new Map<string, Endpoint>();
    for (const e of next) incoming.set(e.id, e);
    const changes: { type: 'added' | 'updated' | 'removed'; endpoint: Endpoint }[] = [];
    for (const old of this.#sorted) if (!incoming.has(old.id)) changes.push({ type: 'removed', endpoint: old });
    for (const e of [...incoming.values()].sort(byId)) {
      const old = this.#byId.get(e.id);
      if (!old) changes.push({ type: 'added', endpoint: e });
      else if (old !== e && !sameValue(old, e)) changes.push({ type: 'updated', endpoint: e });
    }
    if (changes.length === 0) return [];
    this.#byId = incoming;
    this.#sorted = [...incoming.values()].sort(byId);
    const endpoints = this.#sorted;
    return changes.map((c) => ({ ...c, endpoints }));
  }
}
