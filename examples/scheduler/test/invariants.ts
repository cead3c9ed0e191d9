import type { TableState } from '../src/index.js';

/**
 * What a failover run must leave behind, as a list of violations (empty = good):
 * no task lost (all done, each by exactly one counted run), no task run by two workers at once
 * (runs of one task never overlap; a crashed worker's open run ends at its crash), nothing started
 * by a worker after it died (beyond a request already in flight), and no stale-token write accepted (accepted leader writes never go
 * below a token the table had already accepted).
 */
export function violations(state: TableState, crashedAt: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  for (const task of state.tasks) {
    if (task.status !== 'done') problems.push(`task ${task.id} lost: status ${task.status} (worker ${task.worker ?? '-'})`);
    const counted = state.runs.filter((r) => r.taskId === task.id && r.outcome === 'done');
    if (counted.length !== 1) problems.push(`task ${task.id} completed ${counted.length} times`);
  }
  // A request the worker sent just before SIGKILL can reach the table just after the test saw the
  // process exit (both are events in the test's loop); such a run starts and ends at its start.
  const inFlight = 1000;
  const end = (r: TableState['runs'][number]) => r.endedAt ?? Math.max(r.startedAt, crashedAt.get(r.worker) ?? Infinity);
  for (const r of state.runs) {
    if (end(r) === Infinity) problems.push(`run of ${r.taskId} #${r.attempt} on ${r.worker} never ended and its worker did not crash`);
    const died = crashedAt.get(r.worker);
    if (died !== undefined && r.startedAt > died + inFlight)
      problems.push(`${r.worker} started ${r.taskId} ${r.startedAt - died} ms after it crashed`);
  }
  const byTask = new Map<string, TableState['runs']>();
  for (const r of state.runs) byTask.set(r.taskId, [...(byTask.get(r.taskId) ?? []), r]);
  for (const [taskId, runs] of byTask) {
    const sorted = [...runs].sort((a, b) => a.startedAt - b.startedAt);
    for (let i = 1; i < sorted.length; i++) {
      const [prev, next] = [sorted[i - 1]!, sorted[i]!];
      if (next.startedAt < end(prev)) {
        problems.push(`task ${taskId} ran on ${prev.worker} (#${prev.attempt}) and ${next.worker} (#${next.attempt}) at once`);
      }
    }
  }
  let highest = -1n;
  for (const w of state.fencedWrites) {
    const token = BigInt(w.token);
    if (w.rejectedBecause === undefined) {
      if (token < highest) problems.push(`stale write accepted: ${w.op} by ${w.leader} with token ${token} after ${highest}`);
      if (token > highest) highest = token;
    } else if (token >= highest) {
      problems.push(`write by ${w.leader} with token ${token} refused although the highest accepted was ${highest}`);
    }
  }
  return problems;
}
