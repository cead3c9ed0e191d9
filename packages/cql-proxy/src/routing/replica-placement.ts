import type { Replication } from './replication.js';
import type { TokenRing } from './token-ring.js';

/**
 * The replicas of the range at ring `position`, as indexes into `ring.nodes`, in Cassandra's
 * order: walking the ring clockwise from the owner.
 */
export function placeReplicas(ring: TokenRing, replication: Replication, position: number): number[] {
  if (ring.size === 0) return [];
  return replication.kind === 'simple' ? simple(ring, replication.factor, position) : network(ring, replication.factors, position);
}

/** SimpleStrategy: the next `factor` distinct nodes on the ring. */
function simple(ring: TokenRing, factor: number, position: number): number[] {
  const replicas: number[] = [];
  const wanted = Math.min(factor, ring.nodes.length);
  for (let step = 0; step < ring.size && replicas.length < wanted; step++) {
    const node = ring.ownerAt(position + step);
    if (!replicas.includes(node)) replicas.push(node);
  }
  return replicas;
}

interface DataCenterState {
  readonly wanted: number;
  readonly racks: number;
  readonly seenRacks: Set<string>;
  /** Nodes passed over because their rack already had a replica, in ring order. */
  readonly skipped: number[];
  count: number;
}

/**
 * NetworkTopologyStrategy: per data center, walk the ring and take nodes of distinct racks
 * first; once every rack of the DC has a replica, nodes that were passed over fill the rest in the
 * order they were met (Cassandra's rule).
 */
function network(ring: TokenRing, factors: ReadonlyMap<string, number>, position: number): number[] {
  const dcs = new Map<string, DataCenterState>();
  for (const [dc, factor] of factors) {
    const members = ring.nodes.filter((n) => n.dataCenter === dc);
    const wanted = Math.min(factor, members.length);
    if (wanted > 0) dcs.set(dc, { wanted, racks: new Set(members.map((n) => n.rack)).size, seenRacks: new Set(), skipped: [], count: 0 });
  }
  const replicas: number[] = [];
  const taken = new Set<number>();
  const full = () => [...dcs.values()].every((d) => d.count >= d.wanted);
  const add = (dc: DataCenterState, node: number) => {
    taken.add(node);
    replicas.push(node);
    dc.count++;
  };
  for (let step = 0; step < ring.size && !full(); step++) {
    const node = ring.ownerAt(position + step);
    if (taken.has(node)) continue;
    const { dataCenter, rack } = ring.nodes[node]!;
    const dc = dcs.get(dataCenter);
    if (!dc || dc.count >= dc.wanted) continue;
    if (dc.seenRacks.size === dc.racks) {
      add(dc, node);
    } else if (dc.seenRacks.has(rack)) {
      if (!dc.skipped.includes(node)) dc.skipped.push(node);
    } else {
      add(dc, node);
      dc.seenRacks.add(rack);
      if (dc.seenRacks.size === dc.racks) {
        for (const passed of dc.skipped) {
          if (dc.count >= dc.wanted) break;
          add(dc, passed);
        }
      }
    }
  }
  return replicas;
}
