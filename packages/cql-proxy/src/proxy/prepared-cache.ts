import type { PartitionKeyMarkers } from '../routing/prepared-key.js';

/** A statement as it was prepared: enough to prepare it again on another node. */
export interface PreparedStatement {
  readonly query: string;
  readonly keyspace: string | undefined;
  /** Where its partition key is bound, when requests can be routed by it. */
  readonly partitionKey?: PartitionKeyMarkers;
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
 * every node.
 */
export class PreparedCache {
  readonly #entries = new Map<string, PreparedStatement>();
  readonly #capacity: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(capacity: number, maxBytes = PREPARED_CACHE_BYTES) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The statements' text kept, in UTF-16 code units (about bytes for the ASCII of CQL). */
  get bytes(): number {
    return this.#bytes;
  }

  get(id: Buffer): PreparedStatement | undefined {
    const key = id.toString('hex');
    const entry = this.#entries.get(key);
    if (entry) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
    }
    return entry;
  }

  set(id: Buffer, statement: PreparedStatement): void {
    const key = id.toString('hex');
    this.#remove(key);
    this.#entries.set(key, statement);
    this.#bytes += weight(statement);
    // The newest entry stays even when it alone is over the bytes bound: its EXECUTEs follow at once.
    while (this.#entries.size > 1 && (this.#entries.size > this.#capacity || this.#bytes > this.#maxBytes)) {
      this.#remove(this.#entries.keys().next().value!);
    }
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= weight(entry);
  }
}

const weight = (statement: PreparedStatement) => statement.query.length + (statement.keyspace?.length ?? 0);
