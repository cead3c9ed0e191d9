// Masters and workers as separate processes on the Consul adapter (session locks, session-bound
// heartbeat keys, workers registered in the catalog) against the testenv agent; the leader and a
// worker are killed with SIGKILL.
import { describe, expect, test } from '@jest/globals';
import { createMuster } from '@muster/core';
import { sleep } from '@muster/core/adapter';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { processFailover } from './process-failover.js';

interface ConsulEntry {
  address: string;
  url: string;
}

const entry = testServer<ConsulEntry>('consul');
// Undefined when the package is missing or exports no adapter yet.
const adapter = (await import('@muster/adapter-consul').catch(() => undefined))?.default;
const ready = adapter !== undefined && (['discovery', 'lock', 'heartbeat'] as const).every((p) => adapter.provides.includes(p));
// A workspace package, not an optional tool: without these ports the example is broken, not skippable.
if (!ready) throw new Error('@muster/adapter-consul does not export an adapter with discovery, lock and heartbeat');

(entry && ready ? describe : describe.skip)('scheduler failover, processes on Consul', () => {
  test('SIGKILL the leader and a worker: takeover within the session bound, no task lost or doubled, stale writes refused', async () => {
    const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    // No lock-delay; Consul reaps a dead session after up to 2 × its ttl.
    const options = `{ address: "${entry!.address}", minSessionTtl: 1s, lockDelay: 0s, keyPrefix: "scheduler-${suffix}/" }`;
    // 6 s, not less: on this loaded 2-core machine a renewal (timeout ttl/3) of a 3 s lease sometimes
    // misses its deadline while six processes start, and leadership flaps (safely: the table fences it).
    const leaseTtl = 6000;
    const watcher = await createMuster({ discovery: { adapter: 'consul', options: { address: entry!.address } } });
    try {
      const registered = (async () => {
        // Workers register themselves in the catalog (Discovery.register), and the test sees them.
        for (let i = 0; i < 200; i++) {
          const endpoints = await watcher.discovery.list(`scheduler-worker-${suffix}`);
          if (endpoints.length === 3) return endpoints.map((e) => e.id);
          await sleep(100);
        }
        return [];
      })().catch((error: unknown) => [`list failed: ${(error as Error).message}`]);
      const result = await processFailover({
        ports: `discovery: { adapter: consul, options: ${options} }
lock: { adapter: consul, options: ${options} }
heartbeat: { adapter: consul, options: ${options} }`,
        leaseTtl,
        heartbeatTtl: 2000,
        takeoverBound: 2 * leaseTtl + (leaseTtl * 2) / 15 + 1500,
        suffix,
      });
      expect((await registered).sort()).toEqual([0, 1, 2].map((i) => `worker-${i}-${suffix}`));
      console.log(
        `consul: leader takeover ${result.takeoverMs} ms after SIGKILL (session ttl ${leaseTtl} ms), ${result.reassigned} tasks reassigned (killed worker interrupted mid-task: ${result.interrupted}), ${result.refused} stale writes refused; the paused leader stepped down: ${result.pausedStepDown}\n${result.history.join('\n')}`,
      );
    } finally {
      await watcher.close();
    }
  }, 150_000);
});
