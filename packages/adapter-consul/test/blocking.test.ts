import { describe, expect, test } from '@jest/globals';
import { blockingViews } from '../src/blocking.js';
import type { ConsulResponse } from '../src/client.js';

const answer = (index: bigint | undefined, body: string): ConsulResponse<string> => ({ status: 200, body, index, filteredByAcls: false });

/** Runs the stream over scripted answers and records what was asked and what came out. */
async function run(script: ConsulResponse<string>[], take: number, minInterval = 0) {
  const asked: (bigint | undefined)[] = [];
  const seen: string[] = [];
  const controller = new AbortController();
  let i = 0;
  const views = blockingViews<string>(
    async (index) => {
      asked.push(index);
      const next = script[i++];
      if (!next) throw new Error('script exhausted');
      return next;
    },
    { signal: controller.signal, wait: 1000, minInterval },
  );
  for await (const res of views) {
    seen.push(res.body);
    if (seen.length === take) break;
  }
  return { asked, seen };
}

describe('blocking query stream', () => {
  test('first query is non-blocking, later ones block from the last index; unchanged answers are not yielded', async () => {
    const { asked, seen } = await run([answer(5n, 'a'), answer(5n, 'a'), answer(7n, 'b')], 2);
    expect(asked).toEqual([undefined, 5n, 5n]);
    expect(seen).toEqual(['a', 'b']);
  });

  test('an index that goes backwards is a new view, and the next query blocks from the new index', async () => {
    const { asked, seen } = await run([answer(100n, 'before'), answer(3n, 'after restart'), answer(4n, 'next')], 3);
    expect(seen).toEqual(['before', 'after restart', 'next']);
    expect(asked).toEqual([undefined, 100n, 3n]);
  });

  test('never blocks on index 0 or a missing index: it waits on 1 instead', async () => {
    const { asked } = await run([answer(0n, 'a'), answer(undefined, 'a'), answer(2n, 'b')], 2);
    expect(asked).toEqual([undefined, 1n, 1n]);
  });

  test('an index that changes on every answer is rate-limited', async () => {
    const script = Array.from({ length: 6 }, (_, i) => answer(BigInt(i + 1), `v${i}`));
    const started = Date.now();
    await run(script, 6, 40);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5 * 40 - 5);
  });
});
