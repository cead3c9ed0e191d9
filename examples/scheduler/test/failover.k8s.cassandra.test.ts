// The scheduler on Cassandra: masters and workers as separate processes on Kubernetes (Leases
// for the master lock and the worker heartbeats), the task table in the testenv Cassandra reached
// only through three Muster CQL proxies (static membership, in this process), every leader write
// fenced by Cassandra. Needs both servers: the file name says so, and both are looked up.
import { request } from 'node:https';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from '@jest/globals';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { connectCassandra } from '../src/cassandra-connect.js';
import { processFailover, type ProcessFailoverResult, type TableUnderTest } from './process-failover.js';
import { startProxyCluster, type CassandraEntry, type ProxyCluster } from './proxy-cluster.js';

interface K8sEntry {
  server: string;
  kubeconfig: string;
  caFile: string;
  adminToken: string;
}

// Both looked up, so a missing one is reported (and under CI fails) even when the other is missing too.
const k8s = testServer<K8sEntry>('k8s');
const backend = testServer<CassandraEntry>('cassandra');
const adapter = (await import('@muster/adapter-k8s').catch(() => undefined))?.default;
const ready = adapter !== undefined && adapter.provides.includes('lock') && adapter.provides.includes('heartbeat');
// A workspace package, not an optional tool: without these ports the example is broken, not skippable.
if (!ready) throw new Error('@muster/adapter-k8s does not export an adapter with lock and heartbeat');

function kube(method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${k8s!.server}${path}`,
      {
        method,
        ca: readFileSync(k8s!.caFile),
        headers: { authorization: `Bearer ${k8s!.adminToken}`, 'content-type': 'application/json' },
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

const leaseTtl = 6000;

/** One run in a namespace of its own, with the task table in Cassandra behind `proxies`. */
async function run(proxies: ProxyCluster, fence: boolean, kills: boolean): Promise<ProcessFailoverResult> {
  const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const namespace = `scheduler-${suffix}`;
  expect(await kube('POST', '/api/v1/namespaces', { metadata: { name: namespace } })).toBe(201);
  const options = `{ kubeconfig: ${JSON.stringify(k8s!.kubeconfig)}, namespace: ${namespace} }`;
  const cassandra = {
    contactPoints: proxies.contactPoints,
    localDataCenter: proxies.localDataCenter,
    keyspace: 'muster_scheduler',
    table: 'tasks',
    fence,
  };
  const table = async (lockName: string): Promise<TableUnderTest> => {
    const connection = await connectCassandra(cassandra, lockName);
    await connection.createSchema();
    return {
      store: connection.store,
      section: `  cassandra: ${JSON.stringify(cassandra)}`,
      close: () => connection.close(),
    };
  };
  try {
    return await processFailover({
      ports: `discovery: { adapter: kubernetes, options: ${options} }
lock: { adapter: kubernetes, options: ${options} }
heartbeat: { adapter: kubernetes, options: ${options} }`,
      leaseTtl,
      heartbeatTtl: 2000,
      takeoverBound: leaseTtl + (leaseTtl * 2) / 15 + 1500,
      suffix,
      table,
      pause: 'before-write',
      kills,
      expectViolations: !fence,
    });
  } finally {
    await kube('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`).catch(() => 0);
    await kube('DELETE', `/api/v1/namespaces/${namespace}`).catch(() => 0);
  }
}

(k8s && backend && ready ? describe : describe.skip)(
  'scheduler failover on Kubernetes, task table in Cassandra through the CQL proxy',
  () => {
    test('SIGKILL the leader and a busy worker, pause the next leader right before a write: no task lost or doubled, its stale write refused by Cassandra', async () => {
      const proxies = await startProxyCluster(backend!, 3);
      try {
        const result = await run(proxies, true, true);
        console.log(
          `kubernetes + cassandra: leader takeover ${result.takeoverMs} ms after SIGKILL (lease ${leaseTtl} ms), ${result.reassigned} tasks reassigned (killed worker interrupted mid-task: ${result.interrupted}), the paused leader's writes refused by Cassandra: ${result.refusedAfterPause}; it stepped down: ${result.pausedStepDown}\n${result.history.join('\n')}`,
        );
        expect(result.refusedAfterPause).toBeGreaterThan(0);
      } finally {
        await proxies.close();
      }
    }, 150_000);

    test('control, the fence removed: the same paused leader write is accepted (the invariants name it)', async () => {
      const proxies = await startProxyCluster(backend!, 3);
      try {
        const result = await run(proxies, false, false);
        console.log(`without the fence: ${result.violations.filter((v) => v.includes('write')).join('; ')}`);
        expect(result.refusedAfterPause).toBe(0);
        expect(result.violations.some((v) => v.startsWith('stale write accepted'))).toBe(true);
      } finally {
        await proxies.close();
      }
    }, 120_000);
  },
);
