import type { Assignment, Task } from './task.js';

/** What the leader knows of a worker from its heartbeat. */
export interface WorkerView {
  readonly id: string;
  readonly alive: boolean;
  /** Running task count the worker last reported. */
  readonly running: number;
  readonly capacity: number;
}

/**
 * The leader's decision for one round, with no I/O: every task that is not done and is either
 * pending or held by a worker that is not alive (stale, left, never seen) goes to the least
 * loaded alive worker with room (ties by id, so a round is deterministic). Load is the larger of
 * what the table says the worker holds and what its heartbeat reported.
 */
export function planAssignments(tasks: readonly Task[], workers: readonly WorkerView[]): Assignment[] {
  const alive = workers.filter((w) => w.alive).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const held = new Map<string, number>();
  for (const t of tasks) {
    if (t.status !== 'done' && t.worker !== undefined) held.set(t.worker, (held.get(t.worker) ?? 0) + 1);
  }
  const load = new Map(alive.map((w) => [w.id, Math.max(held.get(w.id) ?? 0, w.running)]));
  const aliveIds = new Set(alive.map((w) => w.id));
  const plan: Assignment[] = [];
  for (const task of [...tasks].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (task.status === 'done') continue;
    if (task.status !== 'pending' && task.worker !== undefined && aliveIds.has(task.worker)) continue;
    let best: WorkerView | undefined;
    for (const w of alive) {
      const l = load.get(w.id)!;
      if (l < w.capacity && (best === undefined || l < load.get(best.id)!)) best = w;
    }
    if (!best) break;
    load.set(best.id, load.get(best.id)! + 1);
    plan.push({ taskId: task.id, worker: best.id, fromAttempt: task.attempt });
  }
  return plan;
}
