// Watches against a kube-apiserver that restarts mid-watch and forgets old resourceVersions:
// discovery reports degraded (never an empty list), then recovered, and converges on the state the
// API holds; a watch from a compacted resourceVersion is a 410 Gone the loop relists on.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { DiscoveryEvent } from '@muster/core';
import { eventually } from '@muster/core/testing';
import { connect, endpointSlices, isGone, type KubeClient } from '../src/client.js';
import { endpointSliceDiscovery } from '../src/discovery.js';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';
import { compactEtcd } from '../../../scripts/testenv/servers/k8s.mjs';

const describeK8s = entry ? describe : describe.skip;
const repo = join(dirname(fileURLToPath(import.meta.url)), '../../..');
let namespace = '';
let client: KubeClient | undefined;

const service = 'restart-svc';
function slice(id: string, address: string): k8s.V1EndpointSlice {
  return {
    metadata: { name: `${service}-${id}`, labels: { 'kubernetes.io/service-name': service } },
    addressType: 'IPv4',
    endpoints: [{ addresses: [address], conditions: { ready: true }, targetRef: { kind: 'Pod', name: id, namespace } }],
    ports: [{ name: 'cql', port: 9042 }],
  };
}

describeK8s('discovery watch across an API server restart and a compaction', () => {
  beforeAll(async () => {
    namespace = await createNamespace('muster-watch');
    client = await connect({ kubeconfig: entry!.kubeconfig, namespace, baseDir: repo });
  });
  afterAll(async () => {
    client?.close();
    if (namespace) await deleteNamespace(namespace);
  });

  test('degraded while down, then recovered and converged; an old resourceVersion is 410 Gone', async () => {
    const api = () => adminConfig().makeApiClient(k8s.DiscoveryV1Api);
    await api().createNamespacedEndpointSlice({ namespace, body: slice('a', '10.8.0.1') });
    await api().createNamespacedEndpointSlice({ namespace, body: slice('b', '10.8.0.2') });

    const discovery = endpointSliceDiscovery({ client: await connect({ kubeconfig: entry!.kubeconfig, namespace, baseDir: repo }) });
    const events: DiscoveryEvent[] = [];
    const consumer = (async () => {
      for await (const event of discovery.watch(service)) events.push(event);
    })();
    await eventually('the snapshot', async () => (events[0]?.type === 'snapshot' ? true : undefined), 10_000);
    expect(events[0]!.endpoints.map((e) => e.id)).toEqual(['a', 'b']);

    const { resourceVersion: old } = await client!.list(endpointSlices, { labelSelector: `kubernetes.io/service-name=${service}` });
    await api().createNamespacedEndpointSlice({ namespace, body: slice('c', '10.8.0.3') });
    await eventually('c to be seen', async () => (events.at(-1)?.endpoints.some((e) => e.id === 'c') ? true : undefined), 10_000);
    await compactEtcd(entry);

    const started = Date.now();
    await promisify(execFile)(process.execPath, ['scripts/testenv/cli.mjs', 'restart', 'k8s'], { cwd: repo });
    const downFor = Date.now() - started;

    // Changes made right after the restart reach the watch through its relist.
    await api().createNamespacedEndpointSlice({ namespace, body: slice('d', '10.8.0.4') });
    await api().deleteNamespacedEndpointSlice({ name: `${service}-a`, namespace });
    await eventually(
      'the watch to converge on b, c, d',
      async () =>
        events
          .at(-1)
          ?.endpoints.map((e) => e.id)
          .join(',') === 'b,c,d'
          ? true
          : undefined,
      45_000,
      100,
    );
    const types = events.map((e) => e.type);
    expect(types).toContain('degraded');
    expect(types.indexOf('recovered')).toBeGreaterThan(types.indexOf('degraded'));
    // Never an empty list while the server was away, and no endpoint reported twice.
    expect(events.every((e) => e.endpoints.length > 0)).toBe(true);
    for (const e of events) expect(new Set(e.endpoints.map((x) => x.id)).size).toBe(e.endpoints.length);
    console.log(`kube-apiserver restart took ${downFor} ms; events: ${types.join(' ')}`);

    // The watch cache was rebuilt from etcd's compacted revision: the old resourceVersion is gone.
    const watch = client!.watch(endpointSlices, {
      resourceVersion: old,
      timeoutSeconds: 5,
      labelSelector: `kubernetes.io/service-name=${service}`,
    });
    const gone = await watch.next().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isGone(gone)).toBe(true);
    expect((gone as Error).message).toMatch(/watch endpointslices\.discovery\.k8s\.io in namespace '[^']+': 410/);

    await discovery.close();
    await consumer;
  }, 240_000);
});
