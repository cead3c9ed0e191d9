// The handler, invoked many times in this process and in fresh processes: nothing it starts may
// outlive an invocation (no timer, socket or loop), warm invocations reuse one Muster, and the
// close path leaves nothing either.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { close, handler } from '../src/handler.js';
import { drained, trackResources } from './resources.js';

/**
 * Work finishing on the next turn of the event loop (a closed socket's last callback, jest's own
 * bookkeeping) shows up as an Immediate for one turn: let one turn pass before counting handles;
 * anything still there after it is a leak.
 */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

const here = dirname(fileURLToPath(import.meta.url));
// The longest timer core leaves after an invocation: release()'s AbortSignal.timeout of
// max(1 s, renew deadline) = 2 s for the handler's 3 s lease. Unref'd, so it never holds the
// process; it must still end — a lease left renewing would re-arm its timer forever.
const settle = 2500;

describe('serverless handler', () => {
  test('200 invocations in one process (sequential and concurrent) leave no handle and no timer behind', async () => {
    const tracker = trackResources();
    try {
      const first = await handler({});
      expect(first).toMatchObject({ endpoints: ['orders-0', 'orders-1'], cold: true, invocation: 1 });
      let last = BigInt(first.token);
      for (let i = 0; i < 100; i++) {
        const r = await handler({});
        expect(r.cold).toBe(false);
        expect(BigInt(r.token)).toBeGreaterThan(last); // the lock changed hands each time: released, not kept
        last = BigInt(r.token);
      }
      // Concurrent invocations queue on the lock and each gets its own, increasing token.
      const concurrent = await Promise.all(Array.from({ length: 99 }, () => handler({})));
      expect(new Set(concurrent.map((r) => r.token)).size).toBe(99);
      // Only what the invocations started counts (trackResources): other test files share this process.
      // The fresh-process test below checks the process as a whole.
      await nextTurn();
      expect(await drained(tracker, settle)).toEqual([]);

      await close();
      await nextTurn();
      expect(await drained(tracker, settle)).toEqual([]);
      expect(await handler({})).toMatchObject({ cold: true });
      await close();
    } finally {
      tracker.stop();
    }
  }, 30_000);

  test('the tracker sees what this context starts, and not what other code in the process does', async () => {
    // Someone else's code, scheduled before tracking, starts a timer while we track (as a driver
    // left reconnecting by another test file would).
    const foreignStarted = new Promise<NodeJS.Timeout>((resolve) => setTimeout(() => resolve(setInterval(() => undefined, 1000)), 20));
    const tracker = trackResources();
    let foreign: NodeJS.Timeout | undefined;
    try {
      const ours = await Promise.resolve().then(() => setInterval(() => undefined, 1000));
      foreign = await foreignStarted;
      expect(tracker.live()).toEqual(['Timeout']);
      clearInterval(ours);
      expect(await drained(tracker, 1000)).toEqual([]);
    } finally {
      tracker.stop();
      clearInterval(foreign);
    }
  });

  test('fresh processes: cold then warm invocations, and each process exits by itself with nothing left', () => {
    const script = join(here, 'invoke-fresh.mjs');
    const dist = join(here, '..', 'dist', 'handler.js');
    if (!existsSync(dist)) throw new Error(`${dist} is missing: run \`npx tsc -b\` at the repository root first`);
    for (let run = 0; run < 4; run++) {
      const started = Date.now();
      // No close() here: a process that still had a ref'd handle after its last invocation would not exit.
      const child = spawnSync(process.execPath, [script, dist, '20', run % 2 === 0 ? 'close' : 'no-close'], {
        encoding: 'utf8',
        timeout: 15_000,
      });
      expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: '' });
      const report = JSON.parse(child.stdout) as {
        results: { cold: boolean }[];
        activeAfter: string[];
        liveAfter: string[];
        exitAfterMs: number;
      };
      expect(report.results.map((r) => r.cold)).toEqual([true, ...Array<boolean>(19).fill(false)]);
      expect(report.activeAfter).toEqual([]);
      expect(report.liveAfter).toEqual([]);
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  }, 90_000);
});
