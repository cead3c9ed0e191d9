import { describe, expect, test } from '@jest/globals';
import { StaleTokenError } from '@muster/core';
import { LocalTaskStore } from '../src/index.js';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('task table', () => {
  test('a leader write with a smaller token than one accepted is refused; equal and larger are accepted', async () => {
    const store = await LocalTaskStore.open();
    await store.submit([{ id: 'a', durationMs: 1 }]);
    await store.seal(5n, 'm1');
    await store.seal(5n, 'm1');
    await expect(store.assign(4n, 'm0', [{ taskId: 'a', worker: 'w', fromAttempt: 0 }])).rejects.toBeInstanceOf(StaleTokenError);
    expect((await store.tasks())[0]).toMatchObject({ status: 'pending', attempt: 0 });
    await store.seal(7n, 'm2');
    await expect(store.seal(5n, 'm1')).rejects.toMatchObject({ token: 5n, highest: 7n });
    const { fencedWrites, highestToken } = await store.state();
    expect(highestToken).toBe('7');
    expect(fencedWrites.map((w) => [w.token, w.rejectedBecause])).toEqual([
      ['5', undefined],
      ['4', '5'],
      ['7', undefined],
      ['5', '7'],
    ]);
  });

  test('assignments compare the attempt; workers may start and finish only the attempt they hold', async () => {
    const store = await LocalTaskStore.open();
    await store.submit([{ id: 'a', durationMs: 1 }]);
    expect(await store.assign(1n, 'm', [{ taskId: 'a', worker: 'w1', fromAttempt: 0 }])).toEqual({ applied: ['a'], conflicts: [] });
    expect(await store.assign(1n, 'm', [{ taskId: 'a', worker: 'w2', fromAttempt: 0 }])).toEqual({ applied: [], conflicts: ['a'] });
    expect(await store.start('a', 1, 'w2')).toBe(false);
    expect(await store.start('a', 1, 'w1')).toBe(true);
    expect(await store.start('a', 1, 'w1')).toBe(false); // already running
    // w1 goes stale; the leader moves the task on; w1's late result does not count.
    await store.assign(1n, 'm', [{ taskId: 'a', worker: 'w2', fromAttempt: 1 }]);
    expect(await store.finish('a', 1, 'w1')).toBe(false);
    expect(await store.start('a', 2, 'w2')).toBe(true);
    expect(await store.finish('a', 2, 'w2')).toBe(true);
    const { tasks, runs } = await store.state();
    expect(tasks[0]).toMatchObject({ status: 'done', worker: 'w2', attempt: 2 });
    expect(runs.map((r) => [r.worker, r.attempt, r.outcome])).toEqual([
      ['w1', 1, 'abandoned'],
      ['w2', 2, 'done'],
    ]);
  });

  test('a file-backed table survives a reopen, the fencing token included', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'scheduler-table-')), 'tasks.json');
    const first = await LocalTaskStore.open({ file });
    await first.submit([{ id: 'a', durationMs: 1 }]);
    await first.seal(9n, 'm');
    await first.close();
    expect(JSON.parse(readFileSync(file, 'utf8')).highestToken).toBe('9');
    const again = await LocalTaskStore.open({ file });
    await expect(again.seal(8n, 'old')).rejects.toBeInstanceOf(StaleTokenError);
    expect((await again.tasks()).map((t) => t.id)).toEqual(['a']);
  });
});
