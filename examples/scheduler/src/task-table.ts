import type { Assignment, AssignOutcome, FencedWrite, TableState, Task } from './task.js';

/** Every write the table takes, as data: the HTTP server receives these, the local store applies them. */
export type TableOp =
  | { readonly op: 'submit'; readonly tasks: readonly { id: string; durationMs: number }[] }
  | { readonly op: 'seal'; readonly token: string; readonly leader: string }
  | { readonly op: 'assign'; readonly token: string; readonly leader: string; readonly assignments: readonly Assignment[] }
  | { readonly op: 'start' | 'finish' | 'abandon'; readonly taskId: string; readonly attempt: number; readonly worker: string };

export type OpResult =
  | { readonly ok: true; readonly outcome?: AssignOutcome; readonly accepted?: boolean }
  | { readonly ok: false; readonly stale: { readonly token: string; readonly highest: string } };

export function emptyTable(): TableState {
  return { highestToken: '-1', tasks: [], runs: [], fencedWrites: [] };
}

/**
 * Applies one write to the table state (mutating it) and says what happened.
 *
 * The fencing check: a leader write (seal, assign) is accepted only if its token is at least the
 * highest token of any accepted leader write, and then raises that highest. Equal is accepted (the
 * same leader writes many times); smaller is refused and recorded. Because the check and the write
 * happen in one step of the table's single writer, no leader can slip a write in between — a
 * leader that lost its lease without noticing (paused, partitioned) carries a smaller token than
 * its successor, whose first act is to seal, so from then on every write of the old leader fails.
 */
export function applyOp(state: TableState, op: TableOp, now: number): OpResult {
  switch (op.op) {
    case 'submit': {
      const known = new Set(state.tasks.map((t) => t.id));
      for (const t of op.tasks)
        if (!known.has(t.id)) state.tasks.push({ id: t.id, durationMs: t.durationMs, status: 'pending', attempt: 0 });
      return { ok: true };
    }
    case 'seal':
    case 'assign': {
      const token = BigInt(op.token);
      const highest = BigInt(state.highestToken);
      const record: FencedWrite = { token: op.token, leader: op.leader, op: op.op, at: now };
      if (token < highest) {
        state.fencedWrites.push({ ...record, rejectedBecause: state.highestToken });
        return { ok: false, stale: { token: op.token, highest: state.highestToken } };
      }
      // A repeated seal by the current leader adds nothing to the record; keep the table small.
      if (op.op === 'assign' || token > highest) state.fencedWrites.push(record);
      state.highestToken = token.toString();
      return op.op === 'seal' ? { ok: true } : { ok: true, outcome: assign(state, op.assignments) };
    }
    case 'start':
      return { ok: true, accepted: start(state, op.taskId, op.attempt, op.worker, now) };
    case 'finish':
      return { ok: true, accepted: finish(state, op.taskId, op.attempt, op.worker, now) };
    case 'abandon':
      closeRun(state, op.taskId, op.attempt, op.worker, now, 'abandoned');
      return { ok: true };
  }
}

function replace(state: TableState, task: Task): void {
  state.tasks[state.tasks.findIndex((t) => t.id === task.id)] = task;
}

function assign(state: TableState, assignments: readonly Assignment[]): AssignOutcome {
  const applied: string[] = [];
  const conflicts: string[] = [];
  for (const a of assignments) {
    const task = state.tasks.find((t) => t.id === a.taskId);
    if (!task || task.status === 'done' || task.attempt !== a.fromAttempt) {
      conflicts.push(a.taskId);
      continue;
    }
    replace(state, { ...task, status: 'assigned', worker: a.worker, attempt: task.attempt + 1 });
    applied.push(a.taskId);
  }
  return { applied, conflicts };
}

function current(state: TableState, taskId: string, attempt: number, worker: string): Task | undefined {
  const task = state.tasks.find((t) => t.id === taskId);
  return task && task.attempt === attempt && task.worker === worker ? task : undefined;
}

function start(state: TableState, taskId: string, attempt: number, worker: string, now: number): boolean {
  const task = current(state, taskId, attempt, worker);
  if (task?.status !== 'assigned') return false;
  replace(state, { ...task, status: 'running' });
  state.runs.push({ taskId, attempt, worker, startedAt: now });
  return true;
}

function finish(state: TableState, taskId: string, attempt: number, worker: string, now: number): boolean {
  const task = current(state, taskId, attempt, worker);
  const accepted = task?.status === 'running';
  if (accepted) replace(state, { ...task, status: 'done' });
  closeRun(state, taskId, attempt, worker, now, accepted ? 'done' : 'abandoned');
  return accepted;
}

function closeRun(state: TableState, taskId: string, attempt: number, worker: string, now: number, outcome: 'done' | 'abandoned'): void {
  const run = state.runs.find((r) => r.taskId === taskId && r.attempt === attempt && r.worker === worker && r.endedAt === undefined);
  if (run) {
    run.endedAt = now;
    run.outcome = outcome;
  }
}
