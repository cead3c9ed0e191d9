import type { PartitionKeyMarkers } from '../routing/prepared-key.js';

/** A statement as it was prepared: enough to prepare it again on another node. */
export interface PreparedStatement {
  readonly query: string;
  readonly keyspace: string | undefined;
  /** Where its partition key is bound, when requests can be routed by it. */
  readonly partitionKey?: PartitionKeyMarkers;
}

/**
 * Prepared statements by id, bounded, least recently used first out. Shared by every client of
 * the proxy: ids are the backend's (an MD5 of query and keyspace), equal on every node.
 */
export class PreparedCache {
  readonly #entries = new Map<string, PreparedStatement>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#entries.size;
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
    this.#entries.delete(key);
    this.#entries.set(key, statement);
    if (this.#entries.size > this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
