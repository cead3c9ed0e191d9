import { systemClock, type Clock, type Endpoint, type MemberHeartbeat } from '@muster/core';
import { sameValue } from '@muster/core/adapter';
import { diffViews, type ClusterEvent } from './events.js';
import { deriveMembership, type MembershipOptions, type SelfIdentity, type VirtualMember } from './membership.js';
import { advanceView, type VirtualView } from './view.js';

/** A view to publish to the system tables, then the events to send for it, in that order. */
export interface MembershipUpdate {
  readonly view: VirtualView;
  readonly events: readonly ClusterEvent[];
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const nodeTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(), // never keeps the process alive
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface MembershipTrackerOptions {
  readonly self: SelfIdentity;
  readonly membership: MembershipOptions;
  /** A change is held until the inputs have been quiet this long (ms, default 1000): a flap inside it sends nothing. */
  readonly flapWindow?: number;
  /** ...but never longer than this after the first held change (ms, default 5000), so churn cannot starve clients. */
  readonly maxDelay?: number;
  /** REMOVED_NODE skips the wait (default true), as core's debounce lets removals through: the instance is gone. */
  readonly removalsImmediate?: boolean;
  readonly clock?: Clock;
  readonly timers?: Timers;
  /** Called with each published view; apply `view` to the tables before sending `events`. */
  readonly onUpdate: (update: MembershipUpdate) => void;
}

/** What of a view drivers can observe; heartbeat timestamps move on every beat and are left out. */
function observable(view: VirtualView): unknown {
  const strip = ({ lastSeen: _lastSeen, incarnation: _incarnation, ...rest }: VirtualMember) => rest;
  return { members: view.members.map(strip), peers: view.peers.map((m) => m.id) };
}

/**
 * Turns Discovery and heartbeat updates into published views and their events, debounced.
 *
 * Every change is diffed against the last *published* view, never against the last input, so a
 * flap that is undone within the window leaves no trace and a missed or reordered watch event heals
 * at the next input or {@link reconcile}. A heartbeat's `alive` is the store's verdict, taken as
 * given: the store's watch judges expiry on the local clock and reports `stale` itself, while a
 * renewal that changes nothing (same payload, still alive) brings no event at all, so the
 * `lastSeen` of the copy held here is the time of the last *change*, not of the last beat, and
 * re-judging it here took every idle member (self included) for DOWN one ttl after it.
 */
export class MembershipTracker {
  readonly #options: MembershipTrackerOptions;
  readonly #clock: Clock;
  readonly #timers: Timers;
  #self: SelfIdentity;
  #endpoints: readonly Endpoint[] | undefined;
  #heartbeats: readonly MemberHeartbeat[] | undefined;
  #published: VirtualView | undefined;
  #heldSince: number | undefined;
  /** The observable state being held, so inputs that change nothing visible (a beat) do not restart the quiet period. */
  #held: unknown;
  #flushTimer: unknown;
  #closed = false;

  constructor(options: MembershipTrackerOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#timers = options.timers ?? nodeTimers;
    this.#self = options.self;
  }

  /** The view the tables should show now; undefined until both inputs have arrived once. */
  get view(): VirtualView | undefined {
    return this.#published;
  }

  setEndpoints(endpoints: readonly Endpoint[]): void {
    this.#endpoints = endpoints;
    this.#changed();
  }

  setHeartbeats(heartbeats: readonly MemberHeartbeat[]): void {
    this.#heartbeats = heartbeats;
    this.#changed();
  }

  /** Self's identity changed (draining sets `ready: false`). */
  setSelf(self: SelfIdentity): void {
    this.#self = self;
    this.#changed();
  }

  /**
   * The periodic resync: takes freshly listed inputs where given and re-derives the membership
   * with the current time. Any difference from the published view goes through the same window.
   */
  reconcile(fresh: { endpoints?: readonly Endpoint[]; heartbeats?: readonly MemberHeartbeat[] } = {}): void {
    if (fresh.endpoints !== undefined) this.#endpoints = fresh.endpoints;
    if (fresh.heartbeats !== undefined) this.#heartbeats = fresh.heartbeats;
    this.#changed();
  }

  /** Publishes any held change now. */
  flush(): void {
    if (this.#closed) return;
    this.#cancelFlush();
    this.#heldSince = undefined;
    this.#held = undefined;
    const next = this.#candidate();
    if (next === undefined) return;
    const events = diffViews(this.#published, next);
    const first = this.#published === undefined;
    if (!first && events.length === 0 && sameValue(observable(next), observable(this.#published as VirtualView))) return;
    this.#published = next;
    this.#options.onUpdate({ view: next, events });
  }

  close(): void {
    this.#closed = true;
    this.#cancelFlush();
  }

  #ready(): boolean {
    const heartbeatsNeeded = this.#options.membership.requireHeartbeat ?? true;
    return this.#endpoints !== undefined && (this.#heartbeats !== undefined || !heartbeatsNeeded);
  }

  #candidate(): VirtualView | undefined {
    if (!this.#ready()) return undefined;
    const membership = deriveMembership(
      { self: this.#self, endpoints: this.#endpoints ?? [], heartbeats: this.#heartbeats ?? [] },
      this.#options.membership,
    );
    return advanceView(this.#published, membership);
  }

  #changed(): void {
    if (this.#closed) return;
    if (this.#published === undefined) return this.flush(); // the first view goes out at once: there is nothing to flap against
    const next = this.#candidate();
    if (next === undefined) return;
    const events = diffViews(this.#published, next);
    const state = observable(next);
    if (events.length === 0 && sameValue(state, observable(this.#published))) {
      // Back to what clients already have: whatever was held was a flap.
      this.#heldSince = undefined;
      this.#held = undefined;
      this.#cancelFlush();
      return;
    }
    if (this.#flushTimer !== undefined && sameValue(state, this.#held)) return;
    this.#held = state;
    const now = this.#clock.now();
    this.#heldSince ??= now;
    const maxDelay = this.#options.maxDelay ?? 5_000;
    if (
      (this.#options.removalsImmediate !== false && events.some((e) => e.change === 'REMOVED_NODE')) ||
      now - this.#heldSince >= maxDelay
    ) {
      return this.flush();
    }
    this.#cancelFlush();
    const wait = Math.min(this.#options.flapWindow ?? 1_000, this.#heldSince + maxDelay - now);
    this.#flushTimer = this.#timers.setTimeout(() => this.flush(), Math.max(0, wait));
  }

  #cancelFlush(): void {
    if (this.#flushTimer !== undefined) this.#timers.clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
  }
}
