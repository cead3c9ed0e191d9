import { InvalidArgumentError } from '@muster/core';
import type { Membership, VirtualMember } from './membership.js';

/**
 * What the system tables show at one moment, as seen by instance `self`: the whole ordered ring,
 * self (system.local), and the members listed in system.peers.
 *
 * A member enters system.peers only once it is up; after that it stays listed while Discovery
 * lists it, DOWN or not, as a real node stays in system.peers while it is down. So a starting
 * instance (heartbeating, not ready yet) is not advertised to drivers that would only fail to
 * connect to it, and a stale heartbeat or failed readiness check reads as DOWN, not as a removal.
 * That rule needs the previous view, which is why views are advanced, never built from scratch.
 */
export interface VirtualView {
  readonly selfId: string;
  readonly members: readonly VirtualMember[];
  readonly self: VirtualMember;
  /** In ring order; never self, never a member without an advertisable address. */
  readonly peers: readonly VirtualMember[];
}

const endpointOf = (m: VirtualMember) => `${m.address}:${m.nativePort}`;

/** The view after `membership`, given the view drivers have seen so far (none at start). */
export function advanceView(previous: VirtualView | undefined, membership: Membership): VirtualView {
  const self = membership.members.find((m) => m.id === membership.selfId);
  if (self === undefined)
    throw new InvalidArgumentError(`membership has no member for self (${membership.selfId}): build it with deriveMembership`);
  const listedBefore = new Map((previous?.peers ?? []).map((m) => [m.id, endpointOf(m)]));
  const peers = membership.members.filter(
    // A member that moved to a new address:port is a new node to drivers: it must be up to enter.
    (m) => !m.self && m.advertisable && (m.up || listedBefore.get(m.id) === endpointOf(m)),
  );
  return { selfId: membership.selfId, members: membership.members, self, peers };
}
