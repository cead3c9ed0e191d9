import { strict as assert } from 'node:assert';

/**
 * The test runner's own functions, passed in so the suites run under jest, vitest or node:test
 * alike (`{ describe, test }` from '@jest/globals' fits as it is).
 */
export interface SuiteRunner {
  describe(name: string, fn: () => void): void;
  test(name: string, fn: () => Promise<void>, timeout?: number): void;
}

export const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls until `check` returns a value other than undefined, or fails naming `what`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 50): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline)
      assert.fail(`${what} did not happen within ${timeoutMs} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await wait(intervalMs);
  }
}

/** Pulls the next item of an async iterator, failing (not hanging) after `timeoutMs`. */
export async function nextWithin<T>(iterator: AsyncIterator<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `no ${what} within ${timeoutMs} ms` })), timeoutMs);
  });
  try {
    const result = await Promise.race([iterator.next(), timeout]);
    if (result.done) assert.fail(`the stream ended while waiting for ${what}`);
    return result.value;
  } finally {
    clearTimeout(timer);
  }
}

/** Reads items until one satisfies `match`, failing after `timeoutMs` in total. */
export async function nextMatching<T>(
  iterator: AsyncIterator<T>,
  match: (item: T) => boolean,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const item = await nextWithin(iterator, Math.max(1, deadline - performance.now()), what);
    if (match(item)) return item;
  }
}

/**
 * Tests that clean up after themselves: `open(factory)` makes an instance that is closed (or
 * `cleanup` run) when the test ends, pass or fail, so one failing test cannot leak into the next.
 */
export function cleaningRunner(runner: SuiteRunner, timeout: number) {
  const cleanups: (() => Promise<unknown> | undefined)[] = [];
  return {
    async open<T extends { close(): Promise<void> }>(factory: () => T | Promise<T>): Promise<T> {
      const instance = await factory();
      cleanups.push(() => instance.close());
      return instance;
    },
    defer(cleanup: () => Promise<unknown> | undefined): void {
      cleanups.push(cleanup);
    },
    test(name: string, fn: () => Promise<void>): void {
      runner.test(
        name,
        async () => {
          try {
            await fn();
          } finally {
            // Newest first: a client closes before the service it used is cleaned up.
            for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
          }
        },
        timeout,
      );
    },
  };
}

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

export async function expectCode(promise: Promise<unknown>, code: string, what: string): Promise<void> {
  try {
    await promise;
  } catch (error) {
    assert.equal(
      (error as { code?: unknown }).code,
      code,
      `${what}: expected an error with code ${code}, got ${(error as Error)?.message ?? String(error)}`,
    );
    return;
  }
  assert.fail(`${what}: expected an error with code ${code}, but it succeeded`);
}

export { assert };

/**
 * Registers a case the adapter's capability manifest (or its control) rules out: skipped where the
 * runner can skip (jest's test.skip), else a case that passes at once; either way its name says why.
 */
export function skipCase(runner: SuiteRunner, name: string, reason: string): void {
  const title = `${name} (skipped: ${reason})`;
  const skip = (runner.test as { skip?: (name: string, fn: () => Promise<void>) => void }).skip;
  if (skip) skip(title, async () => {});
  else runner.test(title, async () => {});
}
