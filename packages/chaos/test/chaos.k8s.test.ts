// The chaos run on Kubernetes at CI size, against the shared kube-apiserver (so no restarts here:
// `npm run chaos -- kubernetes` starts a private one and restarts it too). Each contender is its
// own process behind its own loopback proxy; the Lease is deleted, holders are killed, paused,
// partitioned, slowed and their clocks stepped. Every check must find nothing.
import { expect, test } from '@jest/globals';
import { kubernetesProfile, type KubernetesServer } from '@muster/chaos';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { chaos, seedFor } from './chaos-run.js';

const server = testServer<KubernetesServer>('k8s');

(server ? test : test.skip)(
  'kubernetes: 0 violations under kills, pauses, zombies, partitions, latency, clock steps and Lease deletion',
  async () => {
    const profile = await kubernetesProfile({ runId: `ci${process.pid}`, ttl: 3000, server: server! });
    try {
      const result = await chaos({ profile, seed: seedFor(20261203), contenders: 5, durationMs: 120_000 });
      expect(result.verdict.acquisitions).toBeGreaterThan(5);
      expect(result.verdict.violations).toEqual([]);
    } finally {
      await profile.close();
    }
  },
  240_000,
);
