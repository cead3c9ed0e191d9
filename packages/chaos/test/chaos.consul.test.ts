// The chaos run on Consul at CI size. It starts its own dev agent (never the shared one, which
// other test files use), so the agent's restart is one of the faults; a dev agent keeps nothing,
// so each restart is also a loss of every session and key. Every check must find nothing.
import { expect, test } from '@jest/globals';
import { consulProfile } from '@muster/chaos';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { chaos, seedFor } from './chaos-run.js';

// The shared agent is not used; its presence says the testenv (and its consul build) is there.
const testenv = testServer('consul');

(testenv ? test : test.skip)(
  'consul: 0 violations under kills, pauses, zombies, partitions, latency, clock steps, key deletion and agent restarts',
  async () => {
    const profile = await consulProfile({ runId: `ci${process.pid}`, ttl: 3000 });
    try {
      const result = await chaos({ profile, seed: seedFor(20261203), contenders: 5, durationMs: 120_000 });
      expect(result.verdict.acquisitions).toBeGreaterThan(5);
      expect(result.verdict.violations).toEqual([]);
    } finally {
      await profile.close();
    }
  },
  300_000,
);
