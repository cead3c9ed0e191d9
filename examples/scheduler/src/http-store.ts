import { BackendError, type WaitOptions } from '@muster/core';
import { unwrap } from './local-store.js';
import type { Assignment, AssignOutcome, TableState, Task, TaskStore } from './task.js';
import type { OpResult, TableOp } from './task-table.js';

/** The task table in another process (TableServer), over loopback HTTP. */
export class HttpTaskStore implements TaskStore {
  readonly #url: string;
  readonly #timeout: number;

  constructor(url: string, options: { timeout?: number } = {}) {
    this.#url = url.replace(/\/$/, '');
    this.#timeout = options.timeout ?? 5000;
  }

  async #call<T>(method: 'GET' | 'POST', path: string, options: WaitOptions | undefined, payload?: TableOp): Promise<T> {
    // A timer we clear ourselves (AbortSignal.timeout would outlive the call).
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(new Error(`no answer within ${this.#timeout} ms`)), this.#timeout);
    const signal = options?.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal;
    try {
      return await this.#send<T>(method, path, signal, payload);
    } finally {
      clearTimeout(timer);
    }
  }

  async #send<T>(method: 'GET' | 'POST', path: string, signal: AbortSignal, payload: TableOp | undefined): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${this.#url}${path}`, {
        method,
        signal,
        ...(payload ? { body: JSON.stringify(payload), headers: { 'content-type': 'application/json' } } : {}),
      });
    } catch (cause) {
      throw new BackendError('task-table', `${method} ${this.#url}${path} failed: ${(cause as Error).message}`, { cause });
    }
    const text = await res.text();
    if (!res.ok) throw new BackendError('task-table', `${method} ${path}: ${res.status} ${text}`, { status: res.status });
    return JSON.parse(text) as T;
  }

  async #op(op: TableOp, options?: WaitOptions): Promise<Exclude<OpResult, { ok: false }>> {
    return unwrap(await this.#call<OpResult>('POST', '/ops', options, op));
  }

  async tasks(options?: WaitOptions): Promise<Task[]> {
    return (await this.state(options)).tasks;
  }

  state(options?: WaitOptions): Promise<TableState> {
    return this.#call<TableState>('GET', '/state', options);
  }

  async submit(tasks: readonly { id: string; durationMs: number }[], options?: WaitOptions): Promise<void> {
    await this.#op({ op: 'submit', tasks }, options);
  }

  async seal(token: bigint, leader: string, options?: WaitOptions): Promise<void> {
    await this.#op({ op: 'seal', token: token.toString(), leader }, options);
  }

  async assign(token: bigint, leader: string, assignments: readonly Assignment[], options?: WaitOptions): Promise<AssignOutcome> {
    return (await this.#op({ op: 'assign', token: token.toString(), leader, assignments }, options)).outcome!;
  }

  async start(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean> {
    return (await this.#op({ op: 'start', taskId, attempt, worker }, options)).accepted === true;
  }

  async finish(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<boolean> {
    return (await this.#op({ op: 'finish', taskId, attempt, worker }, options)).accepted === true;
  }

  async abandon(taskId: string, attempt: number, worker: string, options?: WaitOptions): Promise<void> {
    await this.#op({ op: 'abandon', taskId, attempt, worker }, options);
  }

  async close(): Promise<void> {}
}
