// An acquire aborted after its Lease write reached the API server, before the answer came back (a
// slow network path: the server applied it, the reply was still on its way). Nobody holds that
// grant; the lock should be free for others soon, not held by the aborted client's identity for
// the whole ttl it asked for. It is held (round 4 of the adversary review): the fix belongs in
// src/lock.ts, which is being reworked, so the case is pinned with test.failing until then (the
// Consul adapter's twin, abort-after-send.consul.test.ts, passes). Make it `test` with the fix.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { createMuster, type Muster } from '@muster/core';
import { eventually, uniqueName } from '@muster/core/testing';
import { startTcpProxy, type TcpProxy } from '../../../scripts/testenv/tcp-proxy.mjs';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';

let proxy: TcpProxy | undefined;
let namespace = 'default';
const musters: Muster[] = [];

beforeAll(async () => {
  if (!entry) return;
  namespace = await createNamespace('abort-after-send');
  const server = new URL(entry.server);
  proxy = await startTcpProxy({ target: { host: server.hostname, port: Number(server.port) } });
});
afterAll(async () => {
  await Promise.allSettled(musters.map((m) => m.close()));
  await proxy?.close();
  if (entry) await deleteNamespace(namespace);
});

async function lock(kubeconfig: string) {
  const muster = await createMuster({ lock: { adapter: 'kubernetes', options: { kubeconfig, namespace } } });
  musters.push(muster);
  return muster.lock;
}

function kubeconfigVia(server: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'muster-abort-after-send-')), 'kubeconfig');
  writeFileSync(file, readFileSync(entry!.kubeconfig, 'utf8').replace(entry!.server, server));
  return file;
}

(entry ? describe : describe.skip)('Kubernetes: an acquire aborted while its answer is on the way', () => {
  test.failing(
    'leaves the lock free for the next contender (ttl 30 s): KNOWN DEFECT, held for the ttl',
    async () => {
      const slow = await lock(kubeconfigVia(`https://${proxy!.address}`));
      const other = await lock(entry!.kubeconfig);
      const name = uniqueName('abort-after-send');
      const leases = adminConfig().makeApiClient(k8s.CoordinationV1Api);
      await slow.tryAcquire(name, { ttl: 2000 }).then((l) => l?.release()); // connection and Lease made
      proxy!.setDelay({ downstream: 1500 });
      const controller = new AbortController();
      const outcome = slow.acquire(name, { ttl: 30_000, signal: controller.signal }).then(
        () => 'acquired',
        (error: { code?: string }) => error.code,
      );
      await eventually(
        'the Lease to be taken by the slow attempt',
        async () => (await leases.readNamespacedLease({ name, namespace })).spec?.holderIdentity || undefined,
        10_000,
        10,
      );
      controller.abort();
      expect(await outcome).toBe('MUSTER_ABORTED');
      const startedAt = Date.now();
      const lease = await eventually('the lock to be free after the abort', () => other.tryAcquire(name, { ttl: 2000 }), 5000);
      console.log(`lock free ${Date.now() - startedAt} ms after the abort`);
      await lease.release();
    },
    60_000,
  );
});
