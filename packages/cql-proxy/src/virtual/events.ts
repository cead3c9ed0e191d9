import type { InetAddress } from '../protocol/reader.js';
import { canonicalAddress } from './address.js';
import type { VirtualMember } from './membership.js';
import type { VirtualView } from './view.js';

/**
 * The client events one view change means, as instance `self` tells its clients. Shaped like the
 * codec's EVENT bodies (plus the member id, for logs and metrics), so each can be encoded as is.
 *
 * Rules: the new view is published to the system tables before its events are sent, so a driver
 * that re-reads system.peers on NEW_NODE finds the node and one that re-reads on REMOVED_NODE no
 * longer does. NEW_NODE only for a member that is now in system.peers; REMOVED_NODE only for one
 * that was; UP/DOWN only for a member listed in both views whose state flipped, so there is never
 * an UP after an UP; never an event about self (self is never in system.peers).
 */
export type ClusterEvent =
  | {
      readonly type: 'TOPOLOGY_CHANGE';
      readonly change: 'NEW_NODE' | 'REMOVED_NODE';
      readonly address: InetAddress;
      readonly memberId: string;
    }
  | { readonly type: 'STATUS_CHANGE'; readonly change: 'UP' | 'DOWN'; readonly address: InetAddress; readonly memberId: string };

/** Drivers know a node by the address and native port they dial, the address events carry. */
const inetOf = (m: VirtualMember): InetAddress => ({ address: canonicalAddress(m.address), port: m.nativePort });
const endpointOf = (m: VirtualMember) => `${m.address}:${m.nativePort}`;

/**
 * The events from `previous` to `next`, in this order: removals, then DOWN, then UP, then new
 * nodes, each in ring order. A member that moved to another address:port is, to a driver, one
 * node removed and another added. No previous view (the first one) means no events: clients that
 * connect read the tables.
 */
export function diffViews(previous: VirtualView | undefined, next: VirtualView): ClusterEvent[] {
  if (previous === undefined) return [];
  const before = new Map(previous.peers.map((m) => [m.id, m]));
  const after = new Map(next.peers.map((m) => [m.id, m]));
  const kept = (m: VirtualMember, other: Map<string, VirtualMember>) => {
    const o = other.get(m.id);
    return o !== undefined && endpointOf(o) === endpointOf(m) ? o : undefined;
  };
  const events: ClusterEvent[] = [];
  const topology = (change: 'NEW_NODE' | 'REMOVED_NODE', m: VirtualMember) =>
    events.push({ type: 'TOPOLOGY_CHANGE', change, address: inetOf(m), memberId: m.id });
  const status = (change: 'UP' | 'DOWN', m: VirtualMember) =>
    events.push({ type: 'STATUS_CHANGE', change, address: inetOf(m), memberId: m.id });

  for (const m of previous.peers) if (kept(m, after) === undefined) topology('REMOVED_NODE', m);
  for (const m of next.peers) if (!m.up && kept(m, before)?.up === true) status('DOWN', m);
  for (const m of next.peers) if (m.up && kept(m, before)?.up === false) status('UP', m);
  for (const m of next.peers) if (kept(m, before) === undefined) topology('NEW_NODE', m);
  return events.filter((e) => e.memberId !== next.selfId);
}
