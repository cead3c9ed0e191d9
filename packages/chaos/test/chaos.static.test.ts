// The chaos run on the static adapter at CI size: contenders share one host process (static's
// lock lives in-process), faults are simulated crashes, a SIGSTOP of the whole host, and clock
// steps. Every check must find nothing.
import { expect, test } from '@jest/globals';
import { staticProfile } from '@muster/chaos';
import { chaos, seedFor } from './chaos-run.js';

test('static: 0 violations under crashes, pauses and clock steps', async () => {
  const profile = staticProfile({ runId: `ci-${process.pid}`, ttl: 1000 });
  const result = await chaos({ profile, seed: seedFor(20261203), contenders: 5, durationMs: 60_000 });
  expect(result.verdict.acquisitions).toBeGreaterThan(10);
  expect(result.verdict.violations).toEqual([]);
}, 120_000);
