import { StaleTokenError as CoreStaleTokenError, TimeoutError } from '@muster/core';

/**
 * Cassandra refused a fenced write: the partition's fence holds a token above the writer's, so a
 * newer lease holder has written there. Nothing of the batch was applied. Stop the work this lease
 * protects. A subclass of core's StaleTokenError (code `MUSTER_LOCK_LOST`), so code that handles
 * the in-memory FencedResource's refusal handles this one too.
 */
export class StaleTokenError extends CoreStaleTokenError {
  /** The token of the lease that tried to write. */
  readonly writerToken: bigint;
  /** The token Cassandra holds in the fence column, as read by the refused transaction. */
  readonly storedToken: bigint;
  readonly lockName: string;
  /** `keyspace.table` and the partition key values, as given to the fence. */
  readonly table: string;
  readonly partition: readonly unknown[];

  constructor(lockName: string, table: string, partition: readonly unknown[], writerToken: bigint, storedToken: bigint) {
    super(writerToken, storedToken);
    this.message =
      `Cassandra refused the fenced write of lock '${lockName}' to ${table} partition ${describe(partition)}: ` +
      `the writer's token ${writerToken} is below the stored fence ${storedToken} (a newer holder has written); stop, and acquire the lock again`;
    this.writerToken = writerToken;
    this.storedToken = storedToken;
    this.lockName = lockName;
    this.table = table;
    this.partition = partition;
  }
}

/**
 * The batch was sent but its outcome never came back (Cassandra's WriteTimeout or WriteFailure, of
 * writeType CAS or, in the commit phase, SIMPLE; CAS_WRITE_UNKNOWN; Overloaded, which the Muster CQL
 * proxy answers when a forwarded request's answer is late; the driver's own read timeout; the
 * connection lost after the request was written; or a NoHostAvailableError with such an attempt): it
 * may or may not have been applied, and Cassandra may still complete it. Read back at SERIAL (or LOCAL_SERIAL) consistency, e.g. `fence.readToken()` or your own
 * read with that consistency: a serial read finishes any Paxos round in progress, so what it sees is
 * final. Retrying the same idempotent writes with the same lease is safe (an equal token is accepted).
 * `cause` is the driver's error. Code `MUSTER_TIMEOUT`.
 */
export class FenceOutcomeUnknownError extends TimeoutError {
  readonly lockName: string;
  readonly writerToken: bigint;
  readonly table: string;
  readonly partition: readonly unknown[];

  constructor(lockName: string, table: string, partition: readonly unknown[], writerToken: bigint, cause: unknown) {
    super(
      `the fenced write of lock '${lockName}' (token ${writerToken}) to ${table} partition ${describe(partition)} was sent but its outcome was lost, ` +
        `so it may or may not have been applied (${(cause as Error)?.message ?? String(cause)}); ` +
        `read the partition back at SERIAL consistency before deciding, or retry the same idempotent write with the same lease`,
      { cause },
    );
    this.lockName = lockName;
    this.writerToken = writerToken;
    this.table = table;
    this.partition = partition;
  }
}

function describe(partition: readonly unknown[]): string {
  return `(${partition.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ')})`;
}
