import type { WaitOptions } from '../abort.js';
import type { MusterError } from '../errors.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface BeatOptions extends WaitOptions {
  /** How long the member counts as alive after this beat, in ms. */
  readonly ttl?: number;
  /** The group the member belongs to (default `default`). */
  readonly group?: string;
}

/** What is known of one member. */
export interface MemberHeartbeat {
  readonly memberId: string;
  readonly group: string;
  readonly payload: JsonValue;
  /** Local time (ms) at which a change of this member's record was last observed. */
  readonly lastSeen: number;
  /** The ttl the member published with its last beat, in ms. */
  readonly ttl: number;
  /** `lastSeen + ttl` has not passed on the local clock. */
  readonly alive: boolean;
  /** Per-process id of the writer: a new one means the member restarted. */
  readonly incarnation: string;
}

/**
 * What `watch()` yields, shaped like Discovery's: a first `snapshot`, then changes that each carry
 * the full `members`. `stale` and `alive` come from the local clock (no backend event is needed for
 * a member to go stale); `replaced` means a new incarnation took over the member id.
 */
export type HeartbeatEvent =
  | { readonly type: 'snapshot'; readonly members: readonly MemberHeartbeat[] }
  | {
      readonly type: 'joined' | 'updated' | 'stale' | 'alive' | 'replaced' | 'left';
      readonly member: MemberHeartbeat;
      readonly members: readonly MemberHeartbeat[];
    }
  | { readonly type: 'degraded'; readonly error: MusterError; readonly members: readonly MemberHeartbeat[] }
  | { readonly type: 'recovered'; readonly members: readonly MemberHeartbeat[] };

/**
 * HeartbeatStore: liveness plus a small JSON payload per member.
 *
 * Guarantees: `alive` is judged against the member's ttl on the local clock from the moment its
 * last change was observed, never by comparing a remote timestamp with local time, with one
 * exception: a record this client has never seen before, found by a catch-up (get, list, the first
 * view of a watch), is of unknown age, and counts from what the writer's side says (the adapter's
 * server-side verdict, else the writer's own timestamp, never later than now). A writer whose wall
 * clock is behind by more than its ttl therefore reads stale to such a first look until its next
 * beat is observed (a watch sees that one live); one ahead reads alive for one ttl. A restarted
 * member (a new store client, so a new incarnation) always takes its record over with its first
 * beat, whatever its host's clock says; from then on the old incarnation's beats fail with
 * SupersededError instead of overwriting (the backend's write order decides, never a clock). A
 * member that comes back from stale is reported `alive` (and `updated` too if its payload changed). Payloads over the adapter's limit are refused with
 * PayloadTooLargeError before anything is written.
 *
 * Not guaranteed: that a member reported alive is alive now (it may have died within its ttl), or
 * that every beat is observed (beats between two observations coalesce). The order of incarnations
 * lives in the member's record: once the record is gone (`remove()`, an operator's delete, the
 * backend's clean-up of a long-dead member), whichever incarnation beats first writes it again,
 * except one already told it was superseded: its store never writes that member again.
 */
export interface HeartbeatStore {
  /**
   * Writes the member's record. A beat that has not landed within its ttl is abandoned (its request
   * torn down) and rejects with TimeoutError: it could no longer keep the member alive, and a
   * connection that hangs without failing must not hold every later beat up.
   */
  beat(memberId: string, payload: JsonValue, options?: BeatOptions): Promise<void>;
  /** Member ids are unique in a store, whatever their group. */
  get(memberId: string, options?: WaitOptions): Promise<MemberHeartbeat | undefined>;
  /** Members of `group` (every group when omitted), sorted by memberId. */
  list(group?: string, options?: WaitOptions): Promise<MemberHeartbeat[]>;
  watch(group?: string, options?: WaitOptions): AsyncIterable<HeartbeatEvent>;
  remove(memberId: string, options?: WaitOptions): Promise<void>;
  /** Ends every watch; idempotent. Does not remove this process's members (they go stale). */
  close(): Promise<void>;
}
