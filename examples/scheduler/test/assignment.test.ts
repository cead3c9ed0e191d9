import { describe, expect, test } from '@jest/globals';
import { planAssignments, type Task, type WorkerView } from '../src/index.js';

const task = (id: string, rest: Partial<Task> = {}): Task => ({ id, durationMs: 1, status: 'pending', attempt: 0, ...rest });
const worker = (id: string, rest: Partial<WorkerView> = {}): WorkerView => ({ id, alive: true, running: 0, capacity: 2, ...rest });

describe('planAssignments', () => {
  test('pending tasks go to the least loaded alive worker with room, ties by id', () => {
    const plan = planAssignments(
      [task('a'), task('b'), task('c'), task('d'), task('e')],
      [worker('w2'), worker('w1', { running: 1 }), worker('w3', { alive: false })],
    );
    expect(plan.map((p) => `${p.taskId}->${p.worker}`)).toEqual(['a->w2', 'b->w1', 'c->w2']);
  });

  test("a stale or unknown worker's unfinished tasks are reassigned with the attempt the leader saw; done tasks never", () => {
    const tasks = [
      task('a', { status: 'running', worker: 'dead', attempt: 3 }),
      task('b', { status: 'assigned', worker: 'gone', attempt: 1 }),
      task('c', { status: 'running', worker: 'w1', attempt: 1 }),
      task('d', { status: 'done', worker: 'dead', attempt: 1 }),
    ];
    const plan = planAssignments(tasks, [worker('w1'), worker('dead', { alive: false })]);
    expect(plan).toEqual([{ taskId: 'a', worker: 'w1', fromAttempt: 3 }]); // w1 holds c: one slot left
  });

  test('no alive worker, no plan', () => {
    expect(planAssignments([task('a')], [worker('w', { alive: false })])).toEqual([]);
  });
});
