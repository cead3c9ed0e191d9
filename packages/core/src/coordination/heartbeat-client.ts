import { randomUUID } from 'node:crypto';
import { abortable, anySignal, backoffDelay, sleep, type WaitOptions } from '../abort.js';
import { systemClock, type Clock } from '../clock.js';
import {
  abortErrorFrom,
  BackendError,
  ClosedError,
  InvalidArgumentError,
  MusterError,
  PayloadTooLargeError,
  SupersededError,
  TimeoutError,
} from '../errors.js';
import type { BeatOptions, HeartbeatEvent, HeartbeatStore, JsonValue, MemberHeartbeat } from '../ports/heartbeat.js';
import { EventChannel } from './channel.js';
import { isTransient } from './transient.js';
import { sameValue } from './endpoint-set.js';

/** A member's record as the backend stores it. */
export interface HeartbeatRecord {
  readonly memberId: string;
  readonly group: string;
  readonly payload: JsonValue;
  readonly ttl: number;
  readonly incarnation: string;
  /** Changes with every write (resourceVersion, ModifyIndex, a counter): how a beat is observed. */
  readonly version: string;
  /**
   * Only for a record this process has never observed before and found in a catch-up (the first
   * view of a watch, get, list): the backend's own verdict (Consul's TTL check), else the writer's
   * timestamp (wall-clock ms since the epoch, taken when its write started). A record that appears later in a running watch, and every later change, is judged
   * on the local clock alone, from when it was observed.
   */
  readonly remoteAlive?: boolean;
  readonly renewedAt?: number;
}

export interface HeartbeatBackend {
  /**
   * Writes the record. Incarnations are never compared by value (a writer's clock cannot order
   * them); the backend's own write order decides, in one atomic step (compare-and-set on its
   * version):
   * - `takeover: true` (this incarnation's first write of the member): write whatever is stored,
   *   so a restarted member always gets its record back at once;
   * - `takeover: false`: write only if the stored record still has `record.incarnation` (or there
   *   is none); else refuse with SupersededError, so an old incarnation that was paused and
   *   resumed learns it was replaced and never overwrites its successor.
   */
  write(record: Omit<HeartbeatRecord, 'version'>, options: { signal: AbortSignal; takeover: boolean }): Promise<void>;
  read(memberId: string, options: { signal: AbortSignal }): Promise<HeartbeatRecord | undefined>;
  list(group: string | undefined, options: { signal: AbortSignal }): Promise<HeartbeatRecord[]>;
  /** Full views of the group as they change (a watch or blocking query); without it, list is polled. */
  views?(group: string | undefined, options: { signal: AbortSignal }): AsyncIterable<HeartbeatRecord[]>;
  remove(memberId: string, options: { signal: AbortSignal }): Promise<void>;
  close?(): Promise<void>;
}

export interface HeartbeatClientOptions {
  readonly clock?: Clock;
  readonly defaultTtl?: number;
  readonly minTtl?: number;
  readonly maxPayloadBytes?: number;
  /** Poll period of watch() when the backend has no views(). */
  readonly pollInterval?: number;
  readonly incarnation?: string;
}

/** A per-process id. Random: its value orders nothing (the backend's write order does). */
export function newIncarnation(): string {
  return randomUUID();
}

export function createHeartbeatStore(backend: HeartbeatBackend, options: HeartbeatClientOptions = {}): HeartbeatStore {
  return new HeartbeatClient(backend, options);
}

interface Observation {
  version: string;
  seenAt: number;
}

class HeartbeatClient implements HeartbeatStore {
  readonly #backend: HeartbeatBackend;
  readonly #clock: Clock;
  readonly #defaultTtl: number;
  readonly #minTtl: number;
  readonly #maxPayloadBytes: number;
  readonly #pollInterval: number;
  readonly #incarnation: string;
  readonly #observed = new Map<string, Observation>();
  /** Members this incarnation has written: later writes must find the record still ours. */
  readonly #mine = new Set<string>();
  /** Members another incarnation took over from this one (and which): never written again from here. */
  readonly #superseded = new Map<string, string>();
  readonly #closing = new AbortController();

  constructor(backend: HeartbeatBackend, options: HeartbeatClientOptions) {
    this.#backend = backend;
    this.#clock = options.clock ?? systemClock;
    this.#defaultTtl = options.defaultTtl ?? 10_000;
    this.#minTtl = options.minTtl ?? 1;
    this.#maxPayloadBytes = options.maxPayloadBytes ?? 4096;
    this.#pollInterval = options.pollInterval ?? 1000;
    this.#incarnation = options.incarnation ?? newIncarnation();
  }

  #signal(options?: WaitOptions): AbortSignal {
    if (this.#closing.signal.aborted) throw new ClosedError('the heartbeat store');
    return anySignal(options?.signal, this.#closing.signal);
  }

  async beat(memberId: string, payload: JsonValue, options?: BeatOptions): Promise<void> {
    const signal = this.#signal(options);
    const ttl = options?.ttl ?? this.#defaultTtl;
    if (!memberId) throw new InvalidArgumentError('beat(): memberId must be a non-empty string');
    if (!Number.isFinite(ttl) || ttl < this.#minTtl) {
      throw new InvalidArgumentError(`beat(): ttl ${ttl} ms is below this adapter's minimum of ${this.#minTtl} ms`);
    }
    let size: number;
    try {
      size = Buffer.byteLength(JSON.stringify(payload) ?? '');
    } catch (cause) {
      throw new InvalidArgumentError(`beat(): payload of '${memberId}' is not JSON-serialisable (${(cause as Error).message})`);
    }
    if (size > this.#maxPayloadBytes) throw new PayloadTooLargeError(`the payload of '${memberId}'`, size, this.#maxPayloadBytes);
    const superseded = this.#superseded.get(memberId);
    // Once the record is gone (removed by an operator) an old incarnation's write would be
    // accepted, and the newest one refused from then on: it must not come from here.
    if (superseded !== undefined) throw new SupersededError(memberId, this.#incarnation, superseded);
    const record = { memberId, group: options?.group ?? 'default', payload, ttl, incarnation: this.#incarnation };
    // A beat that has not landed within its ttl is worth nothing (the member reads stale by then),
    // and a connection that swallows bytes without failing (a black hole, a dropped firewall state)
    // would hold it for the client's whole request timeout (30 s on Kubernetes), every later beat
    // waiting behind it. Aborting tears that connection down; the caller's next beat opens a new one.
    const late = AbortSignal.timeout(ttl);
    const call = anySignal(signal, late);
    try {
      // Raced too, for a backend whose write does not heed its signal: the ttl and the caller's abort still end the beat.
      await abortable(this.#backend.write(record, { signal: call, takeover: !this.#mine.has(memberId) }), call);
    } catch (error) {
      // The caller's own abort (or close()) is what the caller sees, whatever the backend threw for it.
      if (signal.aborted) throw abortErrorFrom(signal, `beat() of '${memberId}'`);
      // Matched by code: an adapter may carry its own copy of core.
      if (MusterError.is(error, 'MUSTER_SUPERSEDED'))
        this.#superseded.set(memberId, (error as Partial<SupersededError>).theirs ?? 'another incarnation');
      if (!late.aborted) throw error;
      throw new TimeoutError(
        `beat(): the write of '${memberId}' did not complete within its ttl (${ttl} ms), so it was abandoned; the backend is unreachable or slow, and the next beat tries again on a new connection`,
        { cause: error },
      );
    }
    this.#mine.add(memberId);
  }

  /**
   * Turns backend records into what callers see, judging liveness on the local clock. `live`: the
   * record came in a view of a stream that was already running (a watch event, a later poll), so
   * it changed just now, whatever it says about itself.
   */
  #judge(record: HeartbeatRecord, now: number, live = false): MemberHeartbeat {
    const seen = this.#observed.get(record.memberId);
    let seenAt: number;
    if (seen && seen.version === record.version) seenAt = seen.seenAt;
    // A change seen as it happens counts from now.
    else if (seen) seenAt = now;
    else {
      // A first sighting: what the writer's side says (Consul's check status, or the writer's
      // timestamp, taken when its write starts). The timestamp is wall time: its age is read on
      // the wall clock and carried over to the local one, which drifts from the wall by every step
      // the host's clock took since this process started.
      const written =
        record.remoteAlive !== undefined
          ? record.remoteAlive
            ? now
            : now - record.ttl
          : record.renewedAt !== undefined
            ? now - Math.max(0, (this.#clock.wall?.() ?? now) - record.renewedAt)
            : now;
      // In a running watch it counts from now while that still says alive: a first beat that took
      // most of its ttl (a new process under load) arrives alive. A record already stale by its
      // writer's side stays so: a re-list after 410 Gone or a restored snapshot inside the same
      // stream can bring one long dead. In a first view (a catch-up of unknown age) the writer's side holds.
      seenAt = live && now < written + record.ttl ? now : written;
    }
    if (!seen || seen.version !== record.version) this.#observed.set(record.memberId, { version: record.version, seenAt });
    return {
      memberId: record.memberId,
      group: record.group,
      payload: record.payload,
      lastSeen: seenAt,
      ttl: record.ttl,
      alive: now < seenAt + record.ttl,
      incarnation: record.incarnation,
    };
  }

  async get(memberId: string, options?: WaitOptions): Promise<MemberHeartbeat | undefined> {
    const record = await this.#backend.read(memberId, { signal: this.#signal(options) });
    return record && this.#judge(record, this.#clock.now());
  }

  async list(group?: string, options?: WaitOptions): Promise<MemberHeartbeat[]> {
    const records = await this.#backend.list(group, { signal: this.#signal(options) });
    const now = this.#clock.now();
    return records.map((r) => this.#judge(r, now)).sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  }

  async remove(memberId: string, options?: WaitOptions): Promise<void> {
    await this.#backend.remove(memberId, { signal: this.#signal(options) });
    this.#observed.delete(memberId);
    this.#mine.delete(memberId);
  }

  watch(group?: string, options?: WaitOptions): AsyncIterable<HeartbeatEvent> {
    const stop = new AbortController();
    const signal = anySignal(this.#signal(options), stop.signal);
    const channel = new EventChannel<HeartbeatEvent>(() => stop.abort(), signal);
    void this.#runWatch(group, signal, channel);
    return channel;
  }

  async #runWatch(group: string | undefined, signal: AbortSignal, channel: EventChannel<HeartbeatEvent>): Promise<void> {
    const members = new Map<string, MemberHeartbeat>();
    let started = false;
    let degraded = false;
    let staleTimer: NodeJS.Timeout | undefined;
    const sorted = () => [...members.values()].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));

    const judgeAll = () => {
      const now = this.#clock.now();
      for (const m of [...members.values()]) {
        const alive = now < m.lastSeen + m.ttl;
        if (alive !== m.alive) {
          const next = { ...m, alive };
          members.set(m.memberId, next);
          channel.push({ type: alive ? 'alive' : 'stale', member: next, members: sorted() });
        }
      }
      armStaleTimer(now);
    };
    const armStaleTimer = (now: number) => {
      clearTimeout(staleTimer);
      const next = Math.min(...[...members.values()].filter((m) => m.alive).map((m) => m.lastSeen + m.ttl));
      if (Number.isFinite(next)) staleTimer = setTimeout(judgeAll, Math.max(1, next - now + 1));
    };

    const apply = (records: HeartbeatRecord[], live: boolean) => {
      const now = this.#clock.now();
      const next = new Map<string, MemberHeartbeat>();
      for (const r of records) if (group === undefined || r.group === group) next.set(r.memberId, this.#judge(r, now, live));
      if (!started) {
        started = true;
        for (const [id, m] of next) members.set(id, m);
        channel.push({ type: 'snapshot', members: sorted() });
        armStaleTimer(now);
        return;
      }
      for (const [id, old] of [...members]) {
        if (!next.has(id)) {
          members.delete(id);
          channel.push({ type: 'left', member: old, members: sorted() });
        }
      }
      for (const [id, m] of next) {
        const old = members.get(id);
        members.set(id, m);
        if (!old) channel.push({ type: 'joined', member: m, members: sorted() });
        else if (old.incarnation !== m.incarnation) channel.push({ type: 'replaced', member: m, members: sorted() });
        else {
          // A member back from the dead with a new payload is both: watchers of liveness must
          // see it alive again, watchers of the payload must see the change.
          if (old.alive !== m.alive) channel.push({ type: m.alive ? 'alive' : 'stale', member: m, members: sorted() });
          if (!sameValue(old.payload, m.payload) || old.group !== m.group) channel.push({ type: 'updated', member: m, members: sorted() });
        }
      }
      armStaleTimer(now);
    };

    for (let attempt = 0; !signal.aborted;) {
      try {
        const views = this.#backend.views ? this.#backend.views(group, { signal }) : this.#poll(group, signal);
        // The first view of a (re)started stream is a catch-up of unknown age; the ones after it are news.
        let live = false;
        for await (const view of views) {
          if (degraded) {
            degraded = false;
            channel.push({ type: 'recovered', members: sorted() });
          }
          attempt = 0;
          apply(view, live);
          live = true;
        }
        if (!signal.aborted) throw new BackendError('heartbeat', 'the watch ended unexpectedly');
      } catch (error) {
        if (signal.aborted) break;
        const err = MusterError.is(error) ? error : new BackendError('heartbeat', String(error), { cause: error });
        if (!started && !isTransient(error)) {
          // Wrong credentials, RBAC, a bad file: say so, as Discovery's watch does, instead of retrying in silence.
          clearTimeout(staleTimer);
          channel.fail(err);
          return;
        }
        if (!degraded && started) {
          degraded = true;
          channel.push({ type: 'degraded', error: err, members: sorted() });
        }
        await sleep(backoffDelay(attempt++), signal).catch(() => undefined);
      }
    }
    clearTimeout(staleTimer);
    channel.end();
  }

  async *#poll(group: string | undefined, signal: AbortSignal): AsyncIterable<HeartbeatRecord[]> {
    for (;;) {
      yield await this.#backend.list(group, { signal });
      await sleep(this.#pollInterval, signal);
    }
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new ClosedError('the heartbeat store'));
    await this.#backend.close?.();
  }
}
