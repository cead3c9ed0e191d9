import { randomUUID } from 'node:crypto';
import cassandra from 'cassandra-driver';
import { BackendError, StaleTokenError, type Lease, type WaitOptions } from '@muster/core';
import { throwIfAborted } from '@muster/core/adapter';
import type { CassandraTableName } from './cassandra-schema.js';
import type { Assignment, AssignOutcome, FencedWrite, LeaderWriteOptions, Run, TableState, Task, TaskStore } from './task.js';

const { consistencies } = cassandra.types;

/** One CQL statement of a batch, as the fence takes it. */
export interface CqlStatement {
  readonly query: string;
  readonly params: unknown[];
}

/** What the store needs from a fence: `@muster/fence-cassandra`'s CassandraFence has this shape. */
export interface TaskFence {
  /**
   * Applies the statements only if no write with a larger token has reached the partition; rejects
   * with a StaleTokenError (core's, or a subclass carrying the token Cassandra holds) otherwise.
   */
  write(lease: Pick<Lease, 'name' | 'token'>, partitionKey: readonly unknown[], statements: readonly CqlStatement[]): Promise<unknown>;
}

export interface CassandraTaskStoreOptions extends CassandraTableName {
  readonly client: cassandra.Client;
  /** The scheduler's partition: its master lock's name. */
  readonly scheduler: string;
  /**
   * Orders leader writes. `undefined` writes them as plain batches, with no fence at all: only for
   * showing what the fence prevents (the control of the failover test), never for real work.
   */
  readonly fence: TaskFence | undefined;
  /** How long the record of an accepted leader write is kept, in seconds (default a day). */
  readonly writeRecordTtl?: number;
  /** Called right before a leader write leaves for Cassandra, after every local check (a test hook). */
  readonly beforeLeaderWrite?: ((op: 'seal' | 'assign') => void) | undefined;
}

// The fence's own defaults (QUORUM, SERIAL): worker writes must be ordered by the same Paxos as the
// leader's, and LOCAL_SERIAL would order only writers within one data centre.
const read = { prepare: true, consistency: consistencies.quorum };
const conditional = { prepare: true, consistency: consistencies.quorum, serialConsistency: consistencies.serial };

type Row = cassandra.types.Row;

function long(value: unknown): bigint | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === 'bigint' ? value : BigInt((value as cassandra.types.Long).toString());
}

function applied(result: cassandra.types.ResultSet): boolean {
  return result.rows[0]?.get('[applied]') === true;
}

/**
 * The task table in Cassandra (directly or through the Muster CQL proxy), one partition per
 * scheduler. Leader writes (seal, assign) go through the fence: a lightweight transaction on the
 * partition's fence column, so Cassandra itself refuses a leader whose token is older than one
 * that has written. Worker writes are conditioned on the task row instead (the attempt they run,
 * their own name, the status): also lightweight transactions in the same partition, so Paxos
 * orders them with the leader's writes.
 */
export class CassandraTaskStore implements TaskStore {
  readonly #o: CassandraTaskStoreOptions;
  readonly #table: string;

  constructor(options: CassandraTaskStoreOptions) {
    this.#o = options;
    this.#table = `${options.keyspace}.${options.table}`;
  }

  async #call<T>(what: string, options: WaitOptions | undefined, run: () => Promise<T>): Promise<T> {
    throwIfAborted(options?.signal, `task table ${what}`);
    try {
      return await run();
    } catch (error) {
      // The fence's refusal (a subclass of core's StaleTokenError, with the token Cassandra holds) passes as it is.
      if (error instanceof StaleTokenError) throw error;
      throw new BackendError(
        'cassandra',
        `${what} on ${this.#table} (scheduler ${this.#o.scheduler}) failed: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }

  async #rows(options?: WaitOptions, kind?: string): Promise<Row[]> {
    return this.#call('read', options, async () => {
      const where = kind ? `scheduler = ? AND kind = ?` : `scheduler = ?`;
      const params = kind ? [this.#o.scheduler, kind] : [this.#o.scheduler];
      const result = await this.#o.client.execute(
        `SELECT kind, id, duration_ms, status, worker, attempt, completed_attempt, run_worker, run_started, run_ended, run_outcome,
                fencing_token, leader, op, writetime(fencing_token) AS written FROM ${this.#table} WHERE ${where}`,
        params,
        read,
      );
      // Pages through a partition of any size: the tasks are few, but the write records grow.
      const rows: Row[] = [];
      for await (const row of result) rows.push(row);
      return rows;
    });
  }

  async tasks(options?: WaitOptions): Promise<Task[]> {
    return (await this.#rows(options, 'task')).map(toTask);
  }

  async state(options?: WaitOptions): Promise<TableState> {
    const rows = await this.#rows(options);
    const tasks = rows.filter((r) => r.get('kind') === 'task');
    const writes = rows
      .filter((r) => r.get('kind') === 'write')
      .sort((a, b) => (long(a.get('written'))! < long(b.get('written'))! ? -1 : 1));
    const fencedWrites: FencedWrite[] = writes.map((r) => ({
      token: long(r.get('fencing_token'))!.toString(),
      leader: r.get('leader') as string,
      op: r.get('op') as 'seal' | 'assign',
      at: Number(long(r.get('written'))! / 1000n),
    }));
    const highest = fencedWrites.reduce((max, w) => (BigInt(w.token) > max ? BigInt(w.token) : max), -1n);
    return { highestToken: highest.toString(), tasks: tasks.map(toTask), runs: tasks.flatMap(toRuns), fencedWrites };
  }

  async submit(tasks: readonly { id: string; durationMs: number }[], options?: WaitOptions): Promise<void> {
    await this.#call('submit', options, () =>
      Promise.all(
        tasks.map((t) =>
          this.#o.client.execute(
            `INSERT INTO ${this.#table} (scheduler, kind, id, duration_ms, status, attempt) VALUES (?, 'task', ?, ?, 'pending', 0) IF NOT EXISTS`,
            [this.#o.scheduler, t.id, t.durationMs],
            conditional,
          ),
        ),
      ),
    );
  }

  /** A leader write: the statements plus its own record, fenced (or, without a fence, a plain batch). */
  async #leaderWrite(
    op: 'seal' | 'assign',
    token: bigint,
    leader: string,
    statements: CqlStatement[],
    options: LeaderWriteOptions | undefined,
  ) {
    const record: CqlStatement = {
      query: `INSERT INTO ${this.#table} (scheduler, kind, id, fencing_token, leader, op) VALUES (?, 'write', ?, ?, ?, ?) USING TTL ?`,
      params: [
        this.#o.scheduler,
        randomUUID(),
        cassandra.types.Long.fromString(token.toString()),
        leader,
        op,
        this.#o.writeRecordTtl ?? 86_400,
      ],
    };
    const all = [...statements, record];
    await this.#call(op, options, async () => {
      const { fence } = this.#o;
      this.#o.beforeLeaderWrite?.(op);
      if (fence) await fence.write(options?.lease ?? { name: this.#o.scheduler, token }, [this.#o.scheduler], all);
      else
        await this.#o.client.batch(all as { query: string; params: unknown[] }[], {
          prepare: true,
          consistency: consistencies.quorum,
        });
    });
  }

  async seal(token: bigint, leader: string, options?: LeaderWriteOptions): Promise<void> {
    await this.#leaderWrite(
      'seal',
      token,
      leader,
      [
        {
          query: `UPDATE ${this.#table} SET leader = ?, fencing_token = ? WHERE scheduler = ? AND kind = 'leader' AND id = ''`,
          params: [leader, cassandra.types.Long.fromString(token.toString()), this.#o.scheduler],
        },
      ],
      options,
    );
  }

  /**
   * Unconditional per task (a fenced batch carries only the fence's condition): the leader read the
   * table after its seal, and only it writes assignments. A task a worker completed meanwhile stays
   * done, because completion is `completed_attempt`, which assignments never touch.
   */
  async assign(token: bigint, leader: string, assignments: readonly Assignment[], options?: LeaderWriteOptions): Promise<AssignOutcome> {
    if (assignments.length === 0) {
      await this.seal(token, leader, options);
      return { applied: [], conflicts: [] };
    }
    await this.#leaderWrite(
      'assign',
      token,
      leader,
      assignments.map((a) => ({
        query: `UPDATE ${this.#table} SET status = 'assigned', worker = ?, attempt = ? WHERE scheduler = ? AND kind = 'task' AND id = ?`,
        params: [a.worker, a.fromAttempt + 1, this.#o.scheduler, a.taskId],
      })),
      options,
    );
    return { applied: assignments.map((a) => a.taskId), conflicts: [] };
  }

  async start(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean> {
    const result = await this.#call('start', options, () =>
      this.#o.client.execute(
        `UPDATE ${this.#table} SET status = 'running', run_worker[?] = ?, run_started[?] = toUnixTimestamp(now())
         WHERE scheduler = ? AND kind = 'task' AND id = ?
         IF attempt = ? AND worker = ? AND status = 'assigned' AND completed_attempt = null`,
        [attempt, worker, attempt, this.#o.scheduler, taskId, attempt, worker],
        conditional,
      ),
    );
    return applied(result);
  }

  async finish(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean> {
    const result = await this.#call('finish', options, () =>
      this.#o.client.execute(
        `UPDATE ${this.#table} SET status = 'done', completed_attempt = ?, run_ended[?] = toUnixTimestamp(now()), run_outcome[?] = 'done'
         WHERE scheduler = ? AND kind = 'task' AND id = ?
         IF attempt = ? AND worker = ? AND status = 'running' AND completed_attempt = null`,
        [attempt, attempt, attempt, this.#o.scheduler, taskId, attempt, worker],
        conditional,
      ),
    );
    if (applied(result)) return true;
    await this.abandon(taskId, attempt, worker, options);
    return false;
  }

  async abandon(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<void> {
    await this.#call('abandon', options, () =>
      this.#o.client.execute(
        `UPDATE ${this.#table} SET run_ended[?] = toUnixTimestamp(now()), run_outcome[?] = 'abandoned'
         WHERE scheduler = ? AND kind = 'task' AND id = ?
         IF run_worker[?] = ? AND run_ended[?] = null`,
        [attempt, attempt, this.#o.scheduler, taskId, attempt, worker, attempt],
        conditional,
      ),
    );
  }

  /** The driver client belongs to whoever made it; closing the store leaves it open. */
  async close(): Promise<void> {}
}

function toTask(row: Row): Task {
  const completed = row.get('completed_attempt') as number | null;
  return {
    id: row.get('id') as string,
    durationMs: row.get('duration_ms') as number,
    status: completed !== null ? 'done' : (row.get('status') as Task['status']),
    worker: (row.get('worker') as string | null) ?? undefined,
    attempt: row.get('attempt') as number,
  };
}

function toRuns(row: Row): Run[] {
  const workers = (row.get('run_worker') as Record<string, string> | null) ?? {};
  const started = (row.get('run_started') as Record<string, unknown> | null) ?? {};
  const ended = (row.get('run_ended') as Record<string, unknown> | null) ?? {};
  const outcomes = (row.get('run_outcome') as Record<string, 'done' | 'abandoned'> | null) ?? {};
  return Object.entries(workers).map(([attempt, worker]) => {
    const end = long(ended[attempt]);
    const run: Run = { taskId: row.get('id') as string, attempt: Number(attempt), worker, startedAt: Number(long(started[attempt])) };
    if (end !== undefined) {
      run.endedAt = Number(end);
      run.outcome = outcomes[attempt];
    }
    return run;
  });
}
