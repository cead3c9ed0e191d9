import { BackendError, SupersededError, type JsonValue } from '@muster/core';
import type { HeartbeatBackend, HeartbeatRecord } from '@muster/core/adapter';
import { checkKeyName, keyPath, type ConsulClient } from './client.js';
import { createSession, destroySession, renewSession } from './session.js';
import { blockingViews } from './blocking.js';

export interface ConsulHeartbeatOptions {
  /** KV prefix of Muster's keys (default `muster/`); heartbeats live under `<prefix>heartbeats/`. */
  readonly keyPrefix: string;
  /** The servers' session_ttl_min: the shortest session Consul accepts (10 s by default). */
  readonly minSessionTtl: number;
  /**
   * How long a member that stopped beating stays listed (stale) before Consul deletes its key, as a
   * multiple of its ttl; at least minSessionTtl. Consul deletes between this and twice this.
   */
  readonly removeAfterTtls: number;
  /** Blocking-query wait of a watch (ms). */
  readonly watchWait: number;
}

/** The KV value of one member. `seq` makes every beat a real write (Consul skips identical ones). */
interface StoredBeat {
  readonly memberId: string;
  readonly group: string;
  readonly payload: JsonValue;
  readonly ttl: number;
  readonly incarnation: string;
  readonly at: number;
  readonly seq: number;
}

interface KvEntry {
  readonly Key: string;
  readonly ModifyIndex: number;
  readonly Session?: string;
  readonly Value?: string | null;
}

interface TxnResponse {
  readonly Results?: { KV?: KvEntry }[] | null;
  readonly Errors?: { OpIndex: number; What: string }[] | null;
}

/** A member this process writes: the session its key is bound to and the last index it wrote. */
interface Written {
  session: string | undefined;
  sessionTtl: number;
  /** performance.now() of the last session renewal: a duration, so never the wall clock. */
  renewedAt: number;
  /** ModifyIndex of our last write; undefined until we know the key's current state. */
  index: bigint | undefined;
  /** The session that holds the key as of `index` (ours, or a predecessor's we must unlock). */
  heldBy: string | undefined;
  seq: number;
}

/**
 * Heartbeats in KV: one key per member, `<prefix>heartbeats/<memberId>`, holding the payload and
 * the ttl, locked by a session of its writer with behavior=delete.
 *
 * Why KV and no TTL check: liveness is judged by core on the local clock from observed changes of
 * `version`, and a key's ModifyIndex changes with every beat, visibly to every reader at once. A
 * TTL check cannot give that: passing an already passing check changes nothing a remote reader
 * sees, its output reaches the servers only every check_update_interval (5 min), and registering
 * checks needs node or service write rights beyond the key prefix. The session carries only the
 * clean-up: when a member stops beating, its key stays (and reads stale) for `removeAfterTtls`
 * ttls, then Consul deletes it with the session and watchers see `left`.
 *
 * Keys are by member id alone (ids are unique across groups, and get() has no group), so a watch
 * of one group is woken by beats of every group and filters them; use a keyPrefix per large
 * deployment if that matters.
 *
 * The incarnation guard is a compare-and-set inside one transaction: check-index on the index we
 * last saw, then lock, so Consul's write order decides, not a writer's clock. A new incarnation's
 * first write (takeover) reads the key and takes it over in that same transaction, unlocking its
 * predecessor's session, so peers see `replaced`, never a gap; the predecessor's next
 * check-index fails, it reads the key, finds another incarnation and stops with SupersededError.
 */
export class ConsulHeartbeatBackend implements HeartbeatBackend {
  readonly #client: ConsulClient;
  readonly #options: ConsulHeartbeatOptions;
  readonly #written = new Map<string, Written>();

  constructor(client: ConsulClient, options: ConsulHeartbeatOptions) {
    this.#client = client;
    this.#options = options;
  }

  get #prefix(): string {
    return `${this.#options.keyPrefix}heartbeats/`;
  }

  #key(memberId: string): string {
    return `${this.#prefix}${checkKeyName('member id', memberId)}`;
  }

  #sessionTtl(ttl: number): number {
    return Math.min(24 * 3_600_000, Math.max(this.#options.minSessionTtl, Math.ceil(ttl * this.#options.removeAfterTtls)));
  }

  async write(record: Omit<HeartbeatRecord, 'version'>, { signal, takeover }: { signal: AbortSignal; takeover: boolean }): Promise<void> {
    const key = this.#key(record.memberId);
    let mine = this.#written.get(record.memberId);
    if (!mine)
      this.#written.set(
        record.memberId,
        (mine = { session: undefined, sessionTtl: 0, renewedAt: 0, index: undefined, heldBy: undefined, seq: 0 }),
      );

    for (let attempt = 0; ; attempt++) {
      const wantTtl = this.#sessionTtl(record.ttl);
      let retired: string | undefined;
      if (mine.session && mine.sessionTtl !== wantTtl) {
        // A new ttl means a new clean-up horizon: bind the key to a fresh session, retire the old one.
        retired = mine.session;
        mine.session = undefined;
      }
      if (!mine.session) {
        mine.session = await createSession(this.#client, {
          name: `muster heartbeat ${record.memberId}`,
          ttl: wantTtl,
          behavior: 'delete',
          // A restarted member must be able to take its key back at once.
          lockDelay: 0,
          signal,
        });
        mine.sessionTtl = wantTtl;
        mine.renewedAt = performance.now();
      } else if (performance.now() - mine.renewedAt > mine.sessionTtl / 3) {
        const renewedAt = performance.now();
        if (await renewSession(this.#client, mine.session, signal)) mine.renewedAt = renewedAt;
        else mine.session = undefined;
        if (!mine.session) continue;
      }

      if (mine.index === undefined) {
        const current = await this.#readEntry(key, signal);
        const stored = current && decode(current);
        if (stored && !takeover && stored.incarnation !== record.incarnation)
          throw new SupersededError(record.memberId, record.incarnation, stored.incarnation);
        mine.index = current ? BigInt(current.ModifyIndex) : 0n;
        mine.heldBy = current?.Session || undefined;
      }

      const value: StoredBeat = { ...record, at: Date.now(), seq: ++mine.seq };
      const ops: unknown[] = [
        mine.index === 0n
          ? { KV: { Verb: 'check-not-exists', Key: key } }
          : { KV: { Verb: 'check-index', Key: key, Index: Number(mine.index) } },
      ];
      if (mine.heldBy && mine.heldBy !== mine.session) ops.push({ KV: { Verb: 'unlock', Key: key, Session: mine.heldBy } });
      ops.push({ KV: { Verb: 'lock', Key: key, Value: Buffer.from(JSON.stringify(value)).toString('base64'), Session: mine.session } });

      const res = await this.#client.put<TxnResponse>('/v1/txn', {
        body: ops,
        accept: [409],
        signal,
        purpose: `write heartbeat key ${key}`,
        rule: `key_prefix "${this.#options.keyPrefix}" { policy = "write" }`,
      });
      if (res.status === 200) {
        const written = res.body?.Results?.at(-1)?.KV;
        mine.index = written ? BigInt(written.ModifyIndex) : undefined;
        mine.heldBy = mine.session;
        if (retired) await destroySession(this.#client, retired, signal).catch(() => undefined);
        return;
      }
      const why = res.body?.Errors?.map((e) => e.What).join('; ') ?? `HTTP ${res.status}`;
      if (/Permission denied|ACL not found/i.test(why)) {
        throw this.#client.transactionError(why, {
          purpose: `write heartbeat key ${key}`,
          rule: `key_prefix "${this.#options.keyPrefix}" { policy = "write" }`,
        });
      }
      // A retired session may still hold the key after a failed attempt: the next attempt unlocks
      // it in its transaction (heldBy), after which it holds nothing and simply expires.
      if (/invalid session/i.test(why)) mine.session = undefined;
      // Someone wrote the key since we last did (a newer incarnation, a removal, the key's
      // expiry): read it again and decide. Bounded, so a key under constant fire cannot spin us.
      mine.index = undefined;
      if (attempt >= 3)
        throw new BackendError('consul', `write heartbeat key ${key}: gave up after ${attempt + 1} conflicting attempts (${why})`, {
          status: 409,
        });
    }
  }

  async #readEntry(key: string, signal: AbortSignal): Promise<KvEntry | undefined> {
    const res = await this.#client.get<KvEntry[]>(`/v1/kv/${keyPath(key)}`, {
      accept: [404],
      signal,
      purpose: `read heartbeat key ${key}`,
      rule: readRule(this.#options.keyPrefix),
    });
    return res.status === 404 ? undefined : res.body?.[0];
  }

  async read(memberId: string, { signal }: { signal: AbortSignal }): Promise<HeartbeatRecord | undefined> {
    const entry = await this.#readEntry(this.#key(memberId), signal);
    return entry && toRecord(entry);
  }

  async list(group: string | undefined, { signal }: { signal: AbortSignal }): Promise<HeartbeatRecord[]> {
    const res = await this.#client.get<KvEntry[]>(`/v1/kv/${keyPath(this.#prefix)}`, {
      query: { recurse: true },
      accept: [404],
      signal,
      purpose: `list heartbeat keys under ${this.#prefix}`,
      rule: readRule(this.#options.keyPrefix),
    });
    return toRecords(res.status === 404 ? [] : (res.body ?? []), group);
  }

  /**
   * Blocking queries on the prefix. Each waits at most twice the longest ttl in the last view (5 s
   * at least, `watchWait` at most): a query on a connection that swallows its answer (a black hole)
   * is given up after its wait plus slack (client.ts), and by then every member reads stale anyway,
   * so a longer wait would only leave a watcher blind that much longer once the network is back.
   * Members that beat wake the query long before its wait; only a quiet group pays the extra queries.
   */
  async *views(group: string | undefined, { signal }: { signal: AbortSignal }): AsyncIterable<HeartbeatRecord[]> {
    let longestTtl = 0;
    const views = blockingViews<KvEntry[] | undefined>(
      (index) =>
        this.#client.get<KvEntry[]>(`/v1/kv/${keyPath(this.#prefix)}`, {
          query: { recurse: true },
          accept: [404],
          signal,
          ...(index !== undefined ? { index, wait: Math.min(this.#options.watchWait, Math.max(minQuietWait, 2 * longestTtl)) } : {}),
          purpose: `watch heartbeat keys under ${this.#prefix}`,
          rule: readRule(this.#options.keyPrefix),
        }),
      { signal, wait: this.#options.watchWait },
    );
    for await (const res of views) {
      const records = toRecords(res.status === 404 ? [] : (res.body ?? []), group);
      longestTtl = records.reduce((longest, r) => Math.max(longest, r.ttl), 0);
      yield records;
    }
  }

  async remove(memberId: string, { signal }: { signal: AbortSignal }): Promise<void> {
    const key = this.#key(memberId);
    await this.#client.delete(`/v1/kv/${keyPath(key)}`, {
      signal,
      purpose: `delete heartbeat key ${key}`,
      rule: `key_prefix "${this.#options.keyPrefix}" { policy = "write" }`,
    });
    const mine = this.#written.get(memberId);
    this.#written.delete(memberId);
    if (mine?.session) await destroySession(this.#client, mine.session, signal).catch(() => undefined);
  }

  /** Leaves the sessions alone: the port says a closed store's members go stale, not that they leave. */
  async close(): Promise<void> {
    this.#written.clear();
    this.#client.close();
  }
}

/** Shortest wait of a heartbeat watch's blocking query (ms), whatever the members' ttls. */
const minQuietWait = 5000;

const readRule = (prefix: string) => `key_prefix "${prefix}" { policy = "read" }`;

function decode(entry: KvEntry): StoredBeat | undefined {
  if (!entry.Value) return undefined;
  try {
    const v = JSON.parse(Buffer.from(entry.Value, 'base64').toString('utf8')) as Partial<StoredBeat>;
    if (typeof v.memberId !== 'string' || typeof v.incarnation !== 'string' || typeof v.ttl !== 'number') return undefined;
    return v as StoredBeat;
  } catch {
    return undefined;
  }
}

function toRecord(entry: KvEntry): HeartbeatRecord | undefined {
  const v = decode(entry);
  if (!v) return undefined;
  return {
    memberId: v.memberId,
    group: typeof v.group === 'string' ? v.group : 'default',
    payload: v.payload ?? null,
    ttl: v.ttl,
    incarnation: v.incarnation,
    version: String(entry.ModifyIndex),
    // Only used for a member this process sees for the first time: the writer's clock says when it
    // last beat, so a long-dead member is not reported alive for one more ttl.
    ...(typeof v.at === 'number' ? { renewedAt: v.at } : {}),
  };
}

/** Entries that are not heartbeats (someone else's keys under the prefix) are skipped, not fatal. */
function toRecords(entries: readonly KvEntry[], group: string | undefined): HeartbeatRecord[] {
  const out: HeartbeatRecord[] = [];
  for (const e of entries) {
    const r = toRecord(e);
    if (r && (group === undefined || r.group === group)) out.push(r);
  }
  return out;
}
