// Three proxies whose membership is Consul (health-service discovery with self-registration,
// heartbeats in KV): cassandra-driver discovers all three; a proxy that shuts down deregisters
// and is reported gone; it comes back when restarted.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { until, type CassandraEntry, type HostEvent } from './harness.js';
import { clusterDriver, startProxyCluster, type ProxyCluster } from './proxy-cluster.js';

const backend = testServer<CassandraEntry>('cassandra');
const consul = testServer<{ address: string }>('consul');
const TIMEOUT = 180_000;

(backend && consul ? describe : describe.skip)('three proxies on Consul membership, cassandra-driver', () => {
  const service = `muster-cql-proxy-${Date.now().toString(36)}`;
  const ids = ['consul-a', 'consul-b', 'consul-c'];
  let cluster: ProxyCluster;
  let client: cassandra.Client;
  let events: HostEvent[] = [];
  const address = (id: string) => cluster.endpoint(id);

  beforeAll(async () => {
    const options = { address: consul!.address, minSessionTtl: '1s', lockDelay: '0s', checkTtl: '2s', watchWait: '5s' };
    cluster = await startProxyCluster(backend!, {
      ids,
      convergence: 60_000,
      member: (id) => ({
        ports: { discovery: { adapter: 'consul', options }, heartbeat: { adapter: 'consul', options } },
        proxy: { instanceId: id, service, heartbeat: { interval: '300ms', ttl: '3s' }, events: { debounce: '100ms', reconcile: '2s' } },
      }),
    });
    ({ client, events } = await clusterDriver(cluster, backend!, 'consul-a'));
  }, TIMEOUT);

  afterAll(async () => {
    await client?.shutdown();
    await cluster?.stop();
  }, TIMEOUT);

  it(
    'all three are discovered through Consul and pooled',
    async () => {
      await until("all three in the driver's metadata", () => client.hosts.length === 3);
      expect(client.hosts.keys().sort()).toEqual(ids.map(address).sort());
      await until('pools to all three', () => client.getState().getConnectedHosts().length === 3);
    },
    TIMEOUT,
  );

  it(
    'a proxy that shuts down deregisters and is removed; restarted, it is added back',
    async () => {
      const victim = 'consul-c';
      const stoppedAt = Date.now();
      await cluster.stopMember(victim);
      const gone = await until('hostRemove', () =>
        events.find((e) => e.type === 'hostRemove' && e.address === address(victim) && e.at >= stoppedAt),
      );
      console.log(`shutdown → driver hostRemove (Consul): ${gone.at - stoppedAt} ms`);
      for (let i = 0; i < 10; i++) await client.execute('SELECT release_version FROM system.local', [], { isIdempotent: true });
      const restartedAt = Date.now();
      await cluster.start(victim);
      const back = await until(
        'hostAdd',
        () => events.find((e) => e.type === 'hostAdd' && e.address === address(victim) && e.at >= restartedAt),
        60_000,
      );
      console.log(`restart → driver hostAdd (Consul): ${back.at - restartedAt} ms`);
    },
    TIMEOUT,
  );
});
