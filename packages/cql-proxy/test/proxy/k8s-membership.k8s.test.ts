// Three proxies whose membership is Kubernetes (EndpointSlices for discovery, per-member Leases
// for heartbeats) against the testenv kube-apiserver, with cassandra-driver. No controller-manager
// runs there, so this test plays the endpoint controller: it writes the Service's EndpointSlice
// (pod readiness → `ready`, pod deletion → the endpoint leaves the slice) as Kubernetes would.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeEvent } from '../../src/protocol/event.js';
import { RawClient } from './raw-client.js';
import { freePort, until, type CassandraEntry, type HostEvent } from './harness.js';
import { clusterDriver, memberHost, startProxyCluster, type ProxyCluster } from './proxy-cluster.js';

interface K8sEntry {
  kubeconfig: string;
}

const backend = testServer<CassandraEntry>('cassandra');
const cluster = testServer<K8sEntry>('k8s');
const TIMEOUT = 180_000;

(backend && cluster ? describe : describe.skip)('three proxies on Kubernetes membership, cassandra-driver', () => {
  const suffix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const namespace = `cql-proxy-${suffix}`;
  const service = 'muster-cql-proxy';
  const ids = ['proxy-0', 'proxy-1', 'proxy-2'];
  const hostOf = (id: string) => memberHost(ids, id);
  let port: number;
  let kc: k8s.KubeConfig;
  let proxyCluster: ProxyCluster;
  let client: cassandra.Client;
  let events: HostEvent[] = [];
  let driverLog: string[] = [];
  const address = (id: string) => `${hostOf(id)}:${port}`;
  /** What the endpoint controller would publish: each pod's address and readiness. */
  const pods = new Map<string, { ready: boolean }>(ids.map((id) => [id, { ready: true }]));

  const publishSlice = async () => {
    const body: k8s.V1EndpointSlice = {
      metadata: { name: `${service}-x1`, namespace, labels: { 'kubernetes.io/service-name': service } },
      // The API server refuses loopback IPs in an IPv4 slice; an FQDN slice takes the dotted form,
      // which is what the proxies listen on here (each on its own 127.0.0.x).
      addressType: 'FQDN',
      ports: [{ name: 'cql', port, protocol: 'TCP' }],
      endpoints: [...pods].map(([id, { ready }]) => ({
        addresses: [hostOf(id)],
        conditions: { ready, serving: ready, terminating: false },
        targetRef: { kind: 'Pod', name: id, namespace },
      })),
    };
    const api = kc.makeApiClient(k8s.DiscoveryV1Api);
    const name = body.metadata!.name!;
    const current = await api.readNamespacedEndpointSlice({ name, namespace }).catch(() => undefined);
    if (!current) await api.createNamespacedEndpointSlice({ namespace, body });
    else {
      body.metadata!.resourceVersion = current.metadata?.resourceVersion;
      await api.replaceNamespacedEndpointSlice({ name, namespace, body });
    }
  };

  const seen = (type: string, id: string, since: number) =>
    until(`${type} for ${id}`, () => events.find((e) => e.type === type && e.address === address(id) && e.at >= since), 60_000);

  beforeAll(async () => {
    kc = new k8s.KubeConfig();
    kc.loadFromFile(cluster!.kubeconfig);
    await kc.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: namespace } } });
    port = await freePort(...ids.map(hostOf));
    await publishSlice();
    const options = { kubeconfig: cluster!.kubeconfig, namespace, port: 'cql' };
    proxyCluster = await startProxyCluster(backend!, {
      ids,
      port,
      convergence: 60_000,
      member: (id) => ({
        ports: { discovery: { adapter: 'kubernetes', options }, heartbeat: { adapter: 'kubernetes', options } },
        proxy: { instanceId: id, service, heartbeat: { interval: '1s', ttl: '3s' }, events: { debounce: '100ms', reconcile: '2s' } },
      }),
    });
    ({ client, events, warnings: driverLog } = await clusterDriver(proxyCluster, backend!, 'proxy-0'));
  }, TIMEOUT);

  afterAll(async () => {
    await client?.shutdown();
    await proxyCluster?.stop();
    if (kc) {
      // No controller-manager: the namespace's objects are ours to remove before the namespace.
      await kc
        .makeApiClient(k8s.DiscoveryV1Api)
        .deleteCollectionNamespacedEndpointSlice({ namespace })
        .catch(() => undefined);
      await kc
        .makeApiClient(k8s.CoordinationV1Api)
        .deleteCollectionNamespacedLease({ namespace })
        .catch(() => undefined);
      await kc
        .makeApiClient(k8s.CoreV1Api)
        .deleteNamespace({ name: namespace })
        .catch(() => undefined);
    }
  }, TIMEOUT);

  const keepsWorking = async () => {
    for (let i = 0; i < 20; i++) {
      const rs = await client.execute('SELECT release_version FROM system.local', [], { isIdempotent: true });
      expect(rs.rows).toHaveLength(1);
    }
  };

  it(
    "all three are discovered from the Service's EndpointSlice and pooled",
    async () => {
      await until("all three in the driver's metadata", () => client.hosts.length === 3);
      expect(client.hosts.keys().sort()).toEqual(ids.map(address).sort());
      await until('pools to all three', () => client.getState().getConnectedHosts().length === 3);
      // The heartbeats are Leases in the namespace, one per proxy.
      const leases = await kc.makeApiClient(k8s.CoordinationV1Api).listNamespacedLease({ namespace });
      expect(leases.items.map((l) => l.metadata?.name).sort()).toEqual(ids.map((id) => `muster-hb-${id}`).sort());
    },
    TIMEOUT,
  );

  it(
    'a pod that turns not ready is reported DOWN, and UP again when ready',
    async () => {
      const victim = 'proxy-2';
      // The Node.js driver only logs a DOWN for a host it still has connections to (it trusts its
      // own pool), so a registered raw client shows both events, and the driver's log the DOWN.
      const watcher = await RawClient.registered(address('proxy-0'), ['STATUS_CHANGE', 'TOPOLOGY_CHANGE']);
      const nextEvent = async () => decodeEvent((await watcher.next(-1, 30_000))!.body);

      pods.set(victim, { ready: false });
      const changedAt = Date.now();
      await publishSlice();
      expect(await nextEvent()).toMatchObject({ type: 'STATUS_CHANGE', change: 'DOWN', address: { address: hostOf(victim), port } });
      console.log(`endpoint not ready → STATUS_CHANGE DOWN (Kubernetes): ${Date.now() - changedAt} ms`);
      await until("the driver's DOWN warning", () =>
        driverLog.find((m) => m.includes(`status change to DOWN for host ${address(victim)}`)),
      );
      await keepsWorking();

      pods.set(victim, { ready: true });
      const readyAt = Date.now();
      await publishSlice();
      expect(await nextEvent()).toMatchObject({ type: 'STATUS_CHANGE', change: 'UP', address: { address: hostOf(victim), port } });
      console.log(`endpoint ready → STATUS_CHANGE UP (Kubernetes): ${Date.now() - readyAt} ms`);
      watcher.close();
      await keepsWorking();
    },
    TIMEOUT,
  );

  it(
    'a pod whose endpoint leaves the slice is removed; its proxy stopped and back, it is added again',
    async () => {
      const victim = 'proxy-1';
      pods.delete(victim);
      const removedAt = Date.now();
      await publishSlice();
      await proxyCluster.stopMember(victim);
      const gone = await seen('hostRemove', victim, removedAt);
      console.log(`endpoint removed → driver hostRemove (Kubernetes): ${gone.at - removedAt} ms`);
      await keepsWorking();
      await proxyCluster.start(victim);
      pods.set(victim, { ready: true });
      const addedAt = Date.now();
      await publishSlice();
      const back = await seen('hostAdd', victim, addedAt);
      console.log(`endpoint added → driver hostAdd (Kubernetes): ${back.at - addedAt} ms`);
      await until('a pool to the returned proxy', () =>
        client
          .getState()
          .getConnectedHosts()
          .some((h) => h.address === address(victim)),
      );
    },
    TIMEOUT,
  );
});
