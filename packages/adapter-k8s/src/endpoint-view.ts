/**
 * The endpoints a watch has reported, and the events that lead from them to a new view. The same
 * contract as core's EndpointSet (removals first, then additions and updates, by id; each event
 * carries the snapshot as it stands after that change), built for large services: the first view
 * is taken without events, an endpoint object that is still the same reference is skipped without
 * a deep compare, and each event's snapshot is one copy of a sorted array instead of a sort. With
 * 10 000 endpoints EndpointSet spends O(changes × n log n) per view, which made a first snapshot
 * take tens of seconds.
 */
import { byId, sameValue, type DiscoveryEvent, type Endpoint } from '@muster/core';

function indexOf(sorted: readonly Endpoint[], id: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]!.id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class EndpointView {
  #byId = new Map<string, Endpoint>();
  #sorted: readonly Endpoint[] = [];

  get endpoints(): readonly Endpoint[] {
    return this.#sorted;
  }

  /** Takes `next` (any order) as the current view without producing events: a first snapshot. */
  seed(next: readonly Endpoint[]): void {
    this.#byId = new Map(next.map((e) => [e.id, e]));
    this.#sorted = [...this.#byId.values()].sort(byId);
  }

  replace(next: readonly Endpoint[]): DiscoveryEvent[] {
    const incoming = new Map<string, Endpoint>();
    for (const e of next) incoming.set(e.id, e);
    const removed: Endpoint[] = [];
    for (const [id, old] of this.#byId) if (!incoming.has(id)) removed.push(old);
    const changed: { type: 'added' | 'updated'; endpoint: Endpoint }[] = [];
    // Equal content keeps the old reference, so the next comparison of it is a reference check.
    const kept = new Map<string, Endpoint>();
    for (const [id, e] of incoming) {
      const old = this.#byId.get(id);
      if (old === undefined) {
        changed.push({ type: 'added', endpoint: e });
        kept.set(id, e);
      } else if (old === e || sameValue(old, e)) {
        kept.set(id, old);
      } else {
        changed.push({ type: 'updated', endpoint: e });
        kept.set(id, e);
      }
    }
    this.#byId = kept;
    if (removed.length === 0 && changed.length === 0) return [];

    const events: DiscoveryEvent[] = [];
    let current = this.#sorted;
    for (const endpoint of removed.sort(byId)) {
      const copy = current.slice();
      copy.splice(indexOf(copy, endpoint.id), 1);
      current = copy;
      events.push({ type: 'removed', endpoint, endpoints: current });
    }
    for (const { type, endpoint } of changed.sort((a, b) => byId(a.endpoint, b.endpoint))) {
      const copy = current.slice();
      const at = indexOf(copy, endpoint.id);
      copy.splice(at, type === 'updated' ? 1 : 0, endpoint);
      current = copy;
      events.push({ type, endpoint, endpoints: current });
    }
    this.#sorted = current;
    return events;
  }
}
