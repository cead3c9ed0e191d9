import type { Event } from '../protocol/event.js';
import { canonicalAddress, isAdvertisable } from '../virtual/address.js';
import type { VirtualView } from '../virtual/view.js';

/**
 * The data center a draining instance shows for itself in system.local: a name no driver is
 * configured for. DC-aware load balancing (cassandra-driver's default) then counts the instance
 * as IGNORED at its next topology refresh, which is the one way that driver moves its control
 * connection off a host without the host closing it: it stops sending there, re-opens its control
 * connection on a peer, and closes its pool to this instance only once every request on it has its
 * answer. Closing that connection from here instead races the requests the driver writes on it.
 */
export const leavingDataCenter = (dc: string): string => `${dc}-draining`;

/**
 * What a draining instance tells its own registered clients about itself (DESIGN's rule is never
 * to send an event about self; a drain is the exception): REMOVED_NODE. Every driver re-reads the
 * topology on a TOPOLOGY_CHANGE (cassandra-driver then reads the leaving data center above), and the
 * Python driver, told its control connection's host is removed, reconnects that connection to a
 * peer and drops its pool here. Empty when self has no address a driver could know it by.
 */
export function farewellEvents(view: VirtualView | undefined): Event[] {
  const self = view?.self;
  if (self === undefined || !isAdvertisable(self.address)) return [];
  return [{ type: 'TOPOLOGY_CHANGE', change: 'REMOVED_NODE', address: { address: canonicalAddress(self.address), port: self.nativePort } }];
}
