import { InvalidArgumentError, type Lease } from '@muster/core';
import type { Client } from 'cassandra-driver';
import { quoteName } from './cql-names.js';
import { FenceOutcomeUnknownError, StaleTokenError } from './errors.js';
import { ensureFenceColumn } from './fence-schema.js';
import { decodeFenceToken, encodeFenceToken } from './fence-token.js';
import { isOutcomeUnknown } from './outcome-unknown.js';

export interface CassandraFenceOptions {
  readonly keyspace: string;
  /** The data table; its partitions carry the fence. */
  readonly table: string;
  /** The table's partition key columns, in order (names as stored, case-sensitive). */
  readonly partitionKey: readonly string[];
  /** The fence column (bigint; static when the table has clustering columns). Default `fence`. */
  readonly fenceColumn?: string;
  /** Consistency of the Paxos commit (the write itself); default QUORUM. A driver `types.consistencies` value. */
  readonly consistency?: number;
  /**
   * Consistency of the Paxos condition; default SERIAL. LOCAL_SERIAL only orders writers within
   * one data centre: use it only when every writer of a partition is in the same one.
   */
  readonly serialConsistency?: number;
}

/** One data statement of a fenced write: the driver's batch query shape. */
export interface FencedStatement {
  readonly query: string;
  readonly params?: readonly unknown[] | Record<string, unknown>;
}

/** What the fence needs of a lease: its lock name (for messages) and token. */
export type FenceLease = Pick<Lease, 'name' | 'token'>;

// Native protocol consistency codes (the driver's types.consistencies), so nothing here loads the driver.
const QUORUM = 0x0004;
const SERIAL = 0x0008;
const INVALID = 0x2200;

/**
 * Writes that Cassandra refuses once a newer lease has written to the same partition.
 *
 * Each write is one conditional (lightweight-transaction) batch on one partition of the data table:
 * the caller's statements plus `UPDATE … SET fence = <token> … IF fence <= <token>`. Cassandra applies
 * all of it or none of it, in one Paxos round, so the check and the data writes are atomic: a write
 * from a paused old holder that arrives after a newer holder's write is refused whatever its timing.
 * The first write to a partition (no fence yet) is made with `IF fence = null`; an equal token (the
 * same holder again) is accepted. See the README for the costs and for what is not protected.
 */
export class CassandraFence {
  readonly #client: Client;
  readonly #options: CassandraFenceOptions;
  readonly #table: string;
  readonly #fence: string;
  readonly #where: string;

  constructor(client: Client, options: CassandraFenceOptions) {
    if (options.partitionKey.length === 0) {
      throw new InvalidArgumentError(
        `CassandraFence: partitionKey of ${options.keyspace}.${options.table} is empty; list its partition key columns`,
      );
    }
    this.#client = client;
    this.#options = options;
    this.#table = `${quoteName(options.keyspace)}.${quoteName(options.table)}`;
    this.#fence = quoteName(options.fenceColumn ?? 'fence');
    this.#where = options.partitionKey.map((c) => `${quoteName(c)} = ?`).join(' AND ');
  }

  /**
   * Adds the fence column if the table lacks it (`ALTER TABLE … ADD fence bigint static`; a regular
   * column when the table has no clustering columns, where a partition is one row), and checks that
   * `partitionKey` is the table's partition key. Safe to call from several processes at once.
   * Warns (MusterWarning MUSTER_FENCE_TABLE_TTL) on a table with a default TTL: the fence itself is
   * written with TTL 0, but each fenced partition keeps a fence-only row after its data expires.
   */
  async ensureSchema(): Promise<void> {
    await ensureFenceColumn(this.#client, { ...this.#options, fenceColumn: this.#options.fenceColumn ?? 'fence' });
  }

  /**
   * Applies `statements` (all on the partition `partitionKeyValues` of this table; none may carry
   * its own IF condition or USING TIMESTAMP) together with the fence check, or none of them.
   * Resolves once applied; rejects with StaleTokenError when a newer token has written to the
   * partition, FenceOutcomeUnknownError when the batch was sent but its outcome was lost (a timeout,
   * a dropped connection: it may have been applied), InvalidArgumentError when Cassandra refuses the
   * batch itself (e.g. a statement on another partition) or the token does not fit a CQL bigint, or
   * the driver's error otherwise (nothing was applied). An empty `statements` just advances the fence.
   */
  async write(lease: FenceLease, partitionKeyValues: readonly unknown[], statements: readonly FencedStatement[]): Promise<void> {
    this.#checkPartition(partitionKeyValues);
    const token = encodeFenceToken(lease.token);
    // Most writes find a fence; the first one to a partition finds null, which `<=` does not match.
    let firstWrite = false;
    // USING TTL 0 (this statement only): a fence that inherited the table's default_time_to_live would
    // expire, and the next write, a stale holder's included, would be a first write again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const check = firstWrite
        ? {
            query: `UPDATE ${this.#table} USING TTL 0 SET ${this.#fence} = ? WHERE ${this.#where} IF ${this.#fence} = null`,
            params: [token, ...partitionKeyValues],
          }
        : {
            query: `UPDATE ${this.#table} USING TTL 0 SET ${this.#fence} = ? WHERE ${this.#where} IF ${this.#fence} <= ?`,
            params: [token, ...partitionKeyValues, token],
          };
      const result = await this.#batch(lease, partitionKeyValues, [...statements, check]);
      const row = result.rows?.[0] as Record<string, unknown> | undefined;
      if (row?.['[applied]'] === true) return;
      const stored = decodeFenceToken(row?.[this.#options.fenceColumn ?? 'fence']);
      if (stored !== undefined && stored > lease.token) {
        throw new StaleTokenError(lease.name, this.#name(), partitionKeyValues, lease.token, stored);
      }
      const expectedNull = stored === undefined;
      if (expectedNull === firstWrite) {
        // The fence allowed the write, so a condition of the caller's statements failed.
        throw new InvalidArgumentError(
          `CassandraFence.write to ${this.#name()}: the batch was not applied although the fence (${stored ?? 'null'}) allows token ${lease.token}; ` +
            `remove the IF conditions from the statements (the fence's condition is the only one it can judge)`,
        );
      }
      firstWrite = expectedNull; // another writer set the first fence meanwhile, or ours is the first
    }
    throw new InvalidArgumentError(
      `CassandraFence.write to ${this.#name()}: the fence kept changing between null and a token; is another tool deleting it?`,
    );
  }

  /**
   * The partition's fence token (undefined before the first fenced write), read at the serial
   * consistency: a serial read completes any Paxos round in progress, so after a
   * FenceOutcomeUnknownError it tells whether a token reached the fence.
   */
  async readToken(partitionKeyValues: readonly unknown[]): Promise<bigint | undefined> {
    this.#checkPartition(partitionKeyValues);
    const result = await this.#client.execute(
      `SELECT ${this.#fence} FROM ${this.#table} WHERE ${this.#where} LIMIT 1`,
      [...partitionKeyValues],
      {
        prepare: true,
        consistency: this.#options.serialConsistency ?? SERIAL,
      },
    );
    return decodeFenceToken((result.rows[0] as Record<string, unknown> | undefined)?.[this.#options.fenceColumn ?? 'fence']);
  }

  async #batch(lease: FenceLease, partition: readonly unknown[], queries: FencedStatement[]) {
    try {
      return await this.#client.batch(queries as { query: string; params?: unknown[] }[], {
        prepare: true,
        consistency: this.#options.consistency ?? QUORUM,
        serialConsistency: this.#options.serialConsistency ?? SERIAL,
      });
    } catch (error) {
      if (isOutcomeUnknown(error)) {
        throw new FenceOutcomeUnknownError(lease.name, this.#name(), partition, lease.token, error);
      }
      if ((error as { code?: number } | undefined)?.code === INVALID) {
        const wrapped = new InvalidArgumentError(
          `CassandraFence.write to ${this.#name()}: Cassandra refused the batch: ${(error as Error).message}; every statement must write partition ` +
            `(${this.#options.partitionKey.join(', ')}) of that table, without IF or USING TIMESTAMP`,
        );
        throw Object.assign(wrapped, { cause: error });
      }
      throw error;
    }
  }

  #checkPartition(values: readonly unknown[]): void {
    if (values.length !== this.#options.partitionKey.length) {
      throw new InvalidArgumentError(
        `CassandraFence: ${values.length} partition key values for ${this.#name()}, whose partition key is (${this.#options.partitionKey.join(', ')}); pass one value per column`,
      );
    }
  }

  #name(): string {
    return `${this.#options.keyspace}.${this.#options.table}`;
  }
}
