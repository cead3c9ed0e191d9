import type { Lease, WaitOptions } from '@muster/core';

/** pending → assigned (leader) → running (worker) → done (worker); a stale worker's task goes back to assigned. */
export type TaskStatus = 'pending' | 'assigned' | 'running' | 'done';

export interface Task {
  readonly id: string;
  /** How long running it takes (the demo's stand-in for real work). */
  readonly durationMs: number;
  readonly status: TaskStatus;
  readonly worker?: string | undefined;
  /** Bumped by every (re)assignment; a worker's start/finish must name the current one. */
  readonly attempt: number;
}

/** One worker running one attempt of a task, stamped by the table's clock. */
export interface Run {
  readonly taskId: string;
  readonly attempt: number;
  readonly worker: string;
  readonly startedAt: number;
  endedAt?: number;
  outcome?: 'done' | 'abandoned';
}

/** A leader write the table accepted or refused, kept so tests can check the fencing afterwards. */
export interface FencedWrite {
  readonly token: string;
  readonly leader: string;
  readonly op: 'seal' | 'assign';
  readonly at: number;
  /** Set when refused: the highest token the table had seen. */
  readonly rejectedBecause?: string;
}

export interface TableState {
  /** Highest fencing token any accepted leader write carried (decimal string; bigint in memory). */
  highestToken: string;
  tasks: Task[];
  runs: Run[];
  fencedWrites: FencedWrite[];
}

export interface Assignment {
  readonly taskId: string;
  readonly worker: string;
  /** The attempt the leader saw; the write is skipped for this task if it has moved on. */
  readonly fromAttempt: number;
}

export interface AssignOutcome {
  readonly applied: readonly string[];
  /** Tasks whose attempt had changed since the leader read them (nothing written for those). */
  readonly conflicts: readonly string[];
}

/** A leader write's options: the lease itself, for stores whose fence takes it (the Cassandra one). */
export interface LeaderWriteOptions extends WaitOptions {
  readonly lease?: Lease;
}

/**
 * The shared task table as masters and workers see it: in-process (`LocalTaskStore`) or over
 * loopback HTTP (`HttpTaskStore`) or in Cassandra (`CassandraTaskStore`). Leader writes carry the fencing token and throw
 * StaleTokenError when a newer leader has written; worker writes name the attempt they run.
 */
export interface TaskStore {
  tasks(options?: WaitOptions): Promise<Task[]>;
  submit(tasks: readonly { id: string; durationMs: number }[], options?: WaitOptions): Promise<void>;
  /** A new leader's first write: raises the table's token so older leaders are refused from now on. */
  seal(token: bigint, leader: string, options?: LeaderWriteOptions): Promise<void>;
  assign(token: bigint, leader: string, assignments: readonly Assignment[], options?: LeaderWriteOptions): Promise<AssignOutcome>;
  /** True when this worker may run the attempt (it is still assigned to it). */
  start(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean>;
  /** True when the result counted; false when the task was reassigned meanwhile. */
  finish(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean>;
  /** Closes this worker's run record without a result (it stopped before finishing). */
  abandon(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<void>;
  state(options?: WaitOptions): Promise<TableState>;
  close(): Promise<void>;
}
