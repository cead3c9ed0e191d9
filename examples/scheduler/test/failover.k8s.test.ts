// Masters and workers as separate processes on the Kubernetes adapter (Leases for the master
// lock and the worker heartbeats) against the testenv kube-apiserver; the leader and a worker
// are killed with SIGKILL.
import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { processFailover } from './process-failover.js';

interface K8sEntry {
  server: string;
  kubeconfig: string;
  caFile: string;
  adminToken: string;
}

const entry = testServer<K8sEntry>('k8s');
// Undefined when the package is missing or exports no adapter yet.
const adapter = (await import('@muster/adapter-k8s').catch(() => undefined))?.default;
const ready = adapter !== undefined && adapter.provides.includes('lock') && adapter.provides.includes('heartbeat');
// A workspace package, not an optional tool: without these ports the example is broken, not skippable.
if (!ready) throw new Error('@muster/adapter-k8s does not export an adapter with lock and heartbeat');

function kube(method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${entry!.server}${path}`,
      {
        method,
        ca: readFileSync(entry!.caFile),
        headers: { authorization: `Bearer ${entry!.adminToken}`, 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

(entry && ready ? describe : describe.skip)('scheduler failover, processes on Kubernetes', () => {
  test('SIGKILL the leader and a worker: takeover within the lease bound, no task lost or doubled, stale writes refused', async () => {
    const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const namespace = `scheduler-${suffix}`;
    expect(await kube('POST', '/api/v1/namespaces', { metadata: { name: namespace } })).toBe(201);
    const options = `{ kubeconfig: ${JSON.stringify(entry!.kubeconfig)}, namespace: ${namespace} }`;
    // 6 s, not less: on this loaded 2-core machine a renewal (timeout ttl/3) of a 3 s lease sometimes
    // misses its deadline while six processes start, and leadership flaps (safely: the table fences it).
    const leaseTtl = 6000;
    try {
      const result = await processFailover({
        ports: `discovery: { adapter: kubernetes, options: ${options} }
lock: { adapter: kubernetes, options: ${options} }
heartbeat: { adapter: kubernetes, options: ${options} }`,
        leaseTtl,
        heartbeatTtl: 2000,
        // client-go's rule: a follower waits a full lease from when it saw the record change, then one retry period.
        takeoverBound: leaseTtl + (leaseTtl * 2) / 15 + 1500,
        suffix,
      });
      console.log(
        `kubernetes: leader takeover ${result.takeoverMs} ms after SIGKILL (lease ${leaseTtl} ms), ${result.reassigned} tasks reassigned (killed worker interrupted mid-task: ${result.interrupted}), ${result.refused} stale writes refused; the paused leader stepped down: ${result.pausedStepDown}\n${result.history.join('\n')}`,
      );
    } finally {
      await kube('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`).catch(() => 0);
      await kube('DELETE', `/api/v1/namespaces/${namespace}`).catch(() => 0);
    }
  }, 150_000);
});
