import { open, readFile, rename } from 'node:fs/promises';
import { StaleTokenError, type Clock, type WaitOptions } from '@muster/core';
import { throwIfAborted } from '@muster/core/adapter';
import type { Assignment, AssignOutcome, TableState, Task, TaskStore } from './task.js';
import { applyOp, emptyTable, type OpResult, type TableOp } from './task-table.js';

/** Throws StaleTokenError for a refused leader write, so every store reports it the same way. */
export function unwrap(result: OpResult): Exclude<OpResult, { ok: false }> {
  if (!result.ok) throw new StaleTokenError(BigInt(result.stale.token), BigInt(result.stale.highest));
  return result;
}

/**
 * The task table in this process: the single writer. Writes are applied one at a time (a promise
 * queue), each to a copy of the state that is saved before it replaces the current one, so the
 * fencing check and the write it guards are one step and a crash never leaves half a write. With a
 * file, the table survives restarts; the file is replaced atomically (write, fsync, rename).
 * Runs and writes are stamped with wall time: the stamps outlive this process and are read beside
 * other processes' (a monotonic reading means nothing outside the process that took it).
 */
const wallClock: Clock = { now: () => Date.now() };

export class LocalTaskStore implements TaskStore {
  readonly #file: string | undefined;
  readonly #clock: Clock;
  #state: TableState;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(state: TableState, file: string | undefined, clock: Clock) {
    this.#state = state;
    this.#file = file;
    this.#clock = clock;
  }

  static async open(options: { file?: string; clock?: Clock } = {}): Promise<LocalTaskStore> {
    let state = emptyTable();
    if (options.file) {
      try {
        state = JSON.parse(await readFile(options.file, 'utf8')) as TableState;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    return new LocalTaskStore(state, options.file, options.clock ?? wallClock);
  }

  apply(op: TableOp): Promise<OpResult> {
    const next = this.#queue.then(async () => {
      const draft = structuredClone(this.#state);
      const result = applyOp(draft, op, this.#clock.now());
      if (this.#file) await save(this.#file, draft);
      this.#state = draft;
      return result;
    });
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #do(op: TableOp, options?: WaitOptions): Promise<Exclude<OpResult, { ok: false }>> {
    throwIfAborted(options?.signal, `task table ${op.op}`);
    return unwrap(await this.apply(op));
  }

  async tasks(): Promise<Task[]> {
    return structuredClone(this.#state.tasks);
  }

  async state(): Promise<TableState> {
    return structuredClone(this.#state);
  }

  async submit(tasks: readonly { id: string; durationMs: number }[], options?: WaitOptions): Promise<void> {
    await this.#do({ op: 'submit', tasks }, options);
  }

  async seal(token: bigint, leader: string, options?: WaitOptions): Promise<void> {
    await this.#do({ op: 'seal', token: token.toString(), leader }, options);
  }

  async assign(token: bigint, leader: string, assignments: readonly Assignment[], options?: WaitOptions): Promise<AssignOutcome> {
    return (await this.#do({ op: 'assign', token: token.toString(), leader, assignments }, options)).outcome!;
  }

  async start(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean> {
    return (await this.#do({ op: 'start', taskId, attempt, worker }, options)).accepted === true;
  }

  async finish(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean> {
    return (await this.#do({ op: 'finish', taskId, attempt, worker }, options)).accepted === true;
  }

  async abandon(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<void> {
    await this.#do({ op: 'abandon', taskId, attempt, worker }, options);
  }

  async close(): Promise<void> {
    await this.#queue;
  }
}

async function save(file: string, state: TableState): Promise<void> {
  const tmp = `${file}.${process.pid}.tmp`;
  const handle = await open(tmp, 'w');
  try {
    await handle.writeFile(JSON.stringify(state));
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(tmp, file);
}
