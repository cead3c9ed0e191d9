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
 * A sorted copy of `view` with one endpoint per id (the last one). A view that is sorted with
 * unique ids already (most backends sort theirs) is copied without sorting: a watch compares one
 * whole view per backend change, so with 10k endpoints the sort would be most of its cost.
 */
function sortedById(view: readonly Endpoint[], uniqueIds: number): readonly Endpoint[] {
  let ordered = uniqueIds === view.length;
  for (let i = 1; ordered && i < view.length; i++) ordered = view[i - 1]!.id < view[i]!.id;
  if (ordered) return view.slice();
  const last = new Map<string, Endpoint>();
  for (const e of view) last.set(e.id, e);
  return [...last.values()].sort(byId);
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
    this.#sorted = sortedById(next, this.#byId.size);
  }

  replace(next: readonly Endpoint[]): DiscoveryEvent[] {
    const incoming = new Map<string, Endpoint>();
    for (const e of next) incoming.set(e.id, e);
    const sorted = sortedById(next, incoming.size);
    const changes: { type: 'added' | 'updated' | 'removed'; endpoint: Endpoint }[] = [];
    for (const old of this.#sorted) if (!incoming.has(old.id)) changes.push({ type: 'removed', endpoint: old });
    for (const e of sorted) {
      const old = this.#byId.get(e.id);
      if (!old) changes.push({ type: 'added', endpoint: e });
      else if (old !== e && !sameValue(old, e)) changes.push({ type: 'updated', endpoint: e });
    }
    if (changes.length === 0) return [];
    this.#byId = incoming;
    this.#sorted = sorted;
    const endpoints = this.#sorted;
    return changes.map((c) => ({ ...c, endpoints }));
  }
}
