// EndpointSlice behaviour the conformance kit does not reach: an endpoint that moves between two
// slices of one Service is never reported removed, readiness conditions as the API stores them,
// and a named port; a named port no slice has is an error, never an empty Service.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { createMuster, type Discovery, type DiscoveryEvent, type Muster } from '@muster/core';
import { eventually } from '@muster/core/testing';
import { adminConfig, createNamespace, deleteNamespace, entry } from './k8s-testenv.js';

const describeK8s = entry ? describe : describe.skip;
let namespace = '';
let muster: Muster | undefined;
const service = 'moving';

const bothPorts = [
  { name: 'metrics', port: 9100 },
  { name: 'cql', port: 9042 },
];
const slice = (name: string, endpoints: k8s.V1Endpoint[], of = service, ports = bothPorts): k8s.V1EndpointSlice => ({
  metadata: { name, labels: { 'kubernetes.io/service-name': of } },
  addressType: 'IPv4',
  endpoints,
  ports,
});
const pod = (name: string, address: string, conditions?: k8s.V1EndpointConditions): k8s.V1Endpoint => ({
  addresses: [address],
  ...(conditions ? { conditions } : {}),
  targetRef: { kind: 'Pod', name, namespace },
  nodeName: 'node-1',
  zone: 'zone-a',
});

describeK8s('EndpointSlices on the real API server', () => {
  beforeAll(async () => {
    namespace = await createNamespace('muster-slices');
    muster = await createMuster({
      discovery: { adapter: 'kubernetes', options: { kubeconfig: entry!.kubeconfig, namespace, port: 'cql' } },
    });
  });
  afterAll(async () => {
    await muster?.close();
    if (namespace) await deleteNamespace(namespace);
  });

  test('a move between slices is no removal; conditions and the named port come through', async () => {
    const api = adminConfig().makeApiClient(k8s.DiscoveryV1Api);
    await api.createNamespacedEndpointSlice({
      namespace,
      body: slice('moving-1', [pod('p-1', '10.7.0.1'), pod('p-2', '10.7.0.2', { ready: false, serving: true, terminating: true })]),
    });
    const events: DiscoveryEvent[] = [];
    const consumer = (async () => {
      for await (const e of muster!.discovery.watch(service)) events.push(e);
    })();
    await eventually('the snapshot', async () => (events[0] ? true : undefined), 10_000);
    expect(events[0]!.endpoints.map((e) => [e.id, e.port, e.ready, e.serving, e.terminating, e.zone, e.nodeName])).toEqual([
      ['p-1', 9042, true, true, false, 'zone-a', 'node-1'],
      ['p-2', 9042, false, true, true, 'zone-a', 'node-1'],
    ]);
    expect(events[0]!.endpoints[0]!.ports).toEqual({ metrics: 9100, cql: 9042 });

    // p-1 moves: it appears in a second slice, then the first slice goes away.
    await api.createNamespacedEndpointSlice({ namespace, body: slice('moving-2', [pod('p-1', '10.7.0.1'), pod('p-3', '10.7.0.3')]) });
    await api.deleteNamespacedEndpointSlice({ name: 'moving-1', namespace });
    await eventually(
      'p-2 to leave',
      async () =>
        events
          .at(-1)!
          .endpoints.map((e) => e.id)
          .join() === 'p-1,p-3'
          ? true
          : undefined,
      10_000,
    );
    const changes = events.slice(1).map((e) => `${e.type}:${'endpoint' in e ? e.endpoint.id : ''}`);
    expect(changes).toEqual(['added:p-3', 'removed:p-2']);
    await muster!.close();
    await consumer;
  }, 30_000);

  test('a named port no slice has fails list() and the first watch, and degrades a running watch, naming the ports there are', async () => {
    const api = adminConfig().makeApiClient(k8s.DiscoveryV1Api);
    const renamed = 'renamed';
    await api.createNamespacedEndpointSlice({ namespace, body: slice('renamed-1', [pod('r-1', '10.7.1.1')], renamed) });
    const opened: Muster[] = [];
    const open = async (port: string) => {
      const m = await createMuster({ discovery: { adapter: 'kubernetes', options: { kubeconfig: entry!.kubeconfig, namespace, port } } });
      opened.push(m);
      return m.discovery;
    };
    try {
      const misspelt = await open('cqll');
      const naming = { code: 'MUSTER_INVALID_ARGUMENT', message: expect.stringMatching(/'cqll'.*'cql', 'metrics'/) as unknown };
      await expect(misspelt.list(renamed)).rejects.toMatchObject(naming);
      await expect(firstEvent(misspelt, renamed)).rejects.toMatchObject(naming);

      // The Service's port is renamed under a running watch: degraded with the last endpoints, then recovered.
      const events: DiscoveryEvent[] = [];
      const consumer = (async () => {
        for await (const e of (await open('cql')).watch(renamed)) events.push(e);
      })();
      await eventually('the snapshot', async () => (events[0] ? true : undefined), 10_000);
      const replace = async (ports: typeof bothPorts) => {
        const { metadata } = await api.readNamespacedEndpointSlice({ name: 'renamed-1', namespace });
        const body = { ...slice('renamed-1', [pod('r-1', '10.7.1.1')], renamed, ports), metadata: { ...metadata } };
        await api.replaceNamespacedEndpointSlice({ name: 'renamed-1', namespace, body });
      };
      await replace([{ name: 'native', port: 9042 }]);
      await eventually('degraded', async () => events.find((e) => e.type === 'degraded'), 10_000);
      await replace(bothPorts);
      await eventually('recovered', async () => events.find((e) => e.type === 'recovered'), 10_000);
      const degraded = events.find((e) => e.type === 'degraded')!;
      expect(degraded.type === 'degraded' && degraded.error.message).toMatch(/'cql'.*they have 'native'/);
      expect(events.map((e) => `${e.type}:${e.endpoints.map((x) => x.id).join()}`)).toEqual([
        'snapshot:r-1',
        'degraded:r-1',
        'recovered:r-1',
      ]);
      await Promise.all(opened.map((m) => m.close()));
      await consumer;
    } finally {
      await Promise.all(opened.map((m) => m.close()));
    }
  }, 30_000);
});

/** The first event of a watch, or the error it fails with. */
async function firstEvent(discovery: Discovery, of: string): Promise<DiscoveryEvent | undefined> {
  for await (const e of discovery.watch(of)) return e;
  return undefined;
}
