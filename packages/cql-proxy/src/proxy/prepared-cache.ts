import type { PartitionKeyMarkers } from '../routing/prepared-key.js';

/** A statement as it was prepared: enough to prepare it again on another node. */
export interface PreparedStatement {
  readonly query: string;
  readonly keyspace: string | undefined;
  /** Where its partition key is bound, when requests can be routed by it. */
  readonly partitionKey?: PartitionKeyMarkers;
}

interface Entry {
  readonly id: Buffer;
  readonly key: number;
  statement: PreparedStatement;
  /** Next entry whose key is the same (ids that agree in their first six bytes). */
  sameKey: Entry | undefined;
  /** Neighbours in recency order: `newer` towards the most recently used. */
  newer: Entry | undefined;
  older: Entry | undefined;
}

/** 2^48: the key's length part sits above the 48 bits of id prefix, below 2^53. */
const PREFIX_SPAN = 2 ** 48;

/**
 * The number an id is filed under: its first six bytes and its length (capped at 31). An EXECUTE
 * looks its id up on every request, so the key is read from the request's bytes in place: no hex
 * string and no Buffer per lookup. Ids are MD5s, so 48 bits spread them; ids that share a key
 * are chained and told apart by their bytes, and a client would need about 2^48 MD5s to add one
 * more to a chain on purpose.
 */
function keyOf(bytes: Buffer, start: number, end: number): number {
  const length = end - start;
  let prefix = 0;
  for (let i = start; i < Math.min(end, start + 6); i++) prefix = prefix * 256 + bytes[i]!;
  return Math.min(length, 31) * PREFIX_SPAN + prefix;
}

function sameBytes(id: Buffer, bytes: Buffer, start: number, end: number): boolean {
  if (id.length !== end - start) return false;
  for (let i = 0; i < id.length; i++) if (id[i] !== bytes[start + i]) return false;
  return true;
}

/**
 * What the statements' text may take at most, all together. A statement may be as long as a frame
 * (16 MiB), so the count alone bounds nothing: 10,000 distinct 1 MiB PREPAREs, each answered by
 * the backend, would have been kept whole. Cassandra bounds its own cache by size in the same way
 * (`prepared_statements_cache_size`); ordinary statements are far under this on average.
 */
export const PREPARED_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Prepared statements by id, bounded in count and in bytes, least recently used first out. Shared
 * by every client of the proxy: ids are the backend's (an MD5 of query and keyspace), equal on
 * every node. Recency is a linked list through the entries, so a lookup moves pointers instead of
 * re-inserting a key.
 */
export class PreparedCache {
  readonly #entries = new Map<number, Entry>();
  readonly #capacity: number;
  readonly #maxBytes: number;
  #size = 0;
  #bytes = 0;
  #newest: Entry | undefined;
  #oldest: Entry | undefined;

  constructor(capacity: number, maxBytes = PREPARED_CACHE_BYTES) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
  }

  get size(): number {
    return this.#size;
  }

  /** The statements' text kept, in UTF-16 code units (about bytes for the ASCII of CQL). */
  get bytes(): number {
    return this.#bytes;
  }

  get(id: Buffer): PreparedStatement | undefined {
    return this.find(id, 0, id.length);
  }

  /** The statement whose id is `bytes[start, end)`, read in place (an EXECUTE's own body). */
  find(bytes: Buffer, start: number, end: number): PreparedStatement | undefined {
    const entry = this.#entry(bytes, start, end, keyOf(bytes, start, end));
    if (!entry) return undefined;
    this.#touch(entry);
    return entry.statement;
  }

  set(id: Buffer, statement: PreparedStatement): void {
    const key = keyOf(id, 0, id.length);
    const known = this.#entry(id, 0, id.length, key);
    if (known) {
      this.#bytes += weight(statement) - weight(known.statement);
      known.statement = statement;
      this.#touch(known);
    } else {
      const entry: Entry = { id, key, statement, sameKey: this.#entries.get(key), newer: undefined, older: undefined };
      this.#entries.set(key, entry);
      this.#size++;
      this.#bytes += weight(statement);
      this.#link(entry);
    }
    // The newest entry stays even when it alone is over the bytes bound: its EXECUTEs follow at once.
    while (this.#size > 1 && (this.#size > this.#capacity || this.#bytes > this.#maxBytes)) this.#evict(this.#oldest!);
  }

  #entry(bytes: Buffer, start: number, end: number, key: number): Entry | undefined {
    for (let entry = this.#entries.get(key); entry; entry = entry.sameKey) if (sameBytes(entry.id, bytes, start, end)) return entry;
    return undefined;
  }

  #touch(entry: Entry): void {
    if (this.#newest === entry) return;
    this.#unlink(entry);
    this.#link(entry);
  }

  /** Makes `entry` the newest. */
  #link(entry: Entry): void {
    entry.older = this.#newest;
    entry.newer = undefined;
    if (this.#newest) this.#newest.newer = entry;
    this.#newest = entry;
    this.#oldest ??= entry;
  }

  #unlink(entry: Entry): void {
    if (entry.newer) entry.newer.older = entry.older;
    else this.#newest = entry.older;
    if (entry.older) entry.older.newer = entry.newer;
    else this.#oldest = entry.newer;
    entry.newer = entry.older = undefined;
  }

  #evict(entry: Entry): void {
    this.#unlink(entry);
    this.#size--;
    this.#bytes -= weight(entry.statement);
    const first = this.#entries.get(entry.key);
    if (first === entry) {
      if (entry.sameKey) this.#entries.set(entry.key, entry.sameKey);
      else this.#entries.delete(entry.key);
      return;
    }
    for (let at = first; at; at = at.sameKey) {
      if (at.sameKey === entry) {
        at.sameKey = entry.sameKey;
        return;
      }
    }
  }
}

const weight = (statement: PreparedStatement) => statement.query.length + (statement.keyspace?.length ?? 0);
