import type { SystemQuery } from '../virtual/system-query.js';

/**
 * The system-table statements the proxy prepared itself, by id, bounded (oldest out first). Every
 * EXECUTE asks {@link owns} whether its id is one of these, so the ids' first 32 bits are kept
 * beside them: an unknown id is turned away without hex-encoding it. Each prefix is counted and
 * leaves with the last statement that has it, so the prefixes shrink with the statements: a client
 * preparing distinct statements without end cannot grow either structure past `capacity`.
 */
export class SystemStatements {
  readonly #statements = new Map<string, SystemQuery>();
  /** First 32 bits of an id → how many kept ids start with them. */
  readonly #prefixes = new Map<number, number>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  get size(): number {
    return this.#statements.size;
  }

  /** Distinct id prefixes kept (never more than {@link size}). */
  get prefixCount(): number {
    return this.#prefixes.size;
  }

  /** Whether the id `bytes[start, end)` is one of these, read in place (an EXECUTE's own body). */
  owns(bytes: Buffer, start = 0, end = bytes.length): boolean {
    // Ids are MD5s (16 bytes); anything shorter is never ours.
    if (this.#statements.size === 0 || end - start < 4 || !this.#prefixes.has(bytes.readInt32BE(start))) return false;
    return this.#statements.has(bytes.toString('hex', start, end));
  }

  get(id: Buffer): SystemQuery | undefined {
    return this.#statements.get(id.toString('hex'));
  }

  set(id: Buffer, query: SystemQuery): void {
    const key = id.toString('hex');
    if (!this.#statements.has(key)) {
      const prefix = id.readInt32BE(0);
      this.#prefixes.set(prefix, (this.#prefixes.get(prefix) ?? 0) + 1);
    }
    this.#statements.set(key, query);
    while (this.#statements.size > this.#capacity) this.#evict(this.#statements.keys().next().value!);
  }

  #evict(key: string): void {
    this.#statements.delete(key);
    const prefix = Buffer.from(key.slice(0, 8), 'hex').readInt32BE(0);
    const left = (this.#prefixes.get(prefix) ?? 1) - 1;
    if (left > 0) this.#prefixes.set(prefix, left);
    else this.#prefixes.delete(prefix);
  }
}
