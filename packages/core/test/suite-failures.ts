import type { SuiteRunner } from '../src/testing/index.js';

/** Runs a conformance suite outside jest and returns the names of the tests that failed. */
export async function failures(register: (runner: SuiteRunner) => void, only?: RegExp): Promise<string[]> {
  const tests: { name: string; fn: () => Promise<void> }[] = [];
  register({ describe: (_n, fn) => fn(), test: (name, fn) => void tests.push({ name, fn }) });
  const failed: string[] = [];
  for (const t of tests.filter((t) => !only || only.test(t.name))) {
    await t.fn().catch(() => failed.push(t.name));
  }
  return failed;
}
