import type { Event } from '../protocol/event.js';
import type { Membership } from '../virtual/membership.js';

/** Placeholder until the virtual cluster's event rules are wired in. */
export function membershipEvents(_previous: Membership | undefined, _next: Membership): Event[] {
  return [];
}
