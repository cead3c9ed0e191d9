import type { Event } from '../protocol/event.js';
import { diffViews } from '../virtual/events.js';
import type { VirtualView } from '../virtual/view.js';

/** The client events from one view to the next, as the codec encodes them. */
export function membershipEvents(previous: VirtualView | undefined, next: VirtualView): Event[] {
  return diffViews(previous, next).map(({ type, change, address }) => ({ type, change, address }));
}
