// Idle proxies stay UP. A HeartbeatStore's watch reports a change (joined, updated payload, stale,
// alive), not every renewal: a member that keeps beating the same payload produces no event. The
// membership tracker once judged expiry from the lastSeen of the last event it got, so an idle
// cluster (no client connecting or leaving, so the same payload) read every member stale one ttl
// later, itself included, and told its clients STATUS_CHANGE DOWN for each peer until the next
// reconcile brought them back UP (gocql drops the pool of a host it hears DOWN about).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startStaticCluster, type CassandraEntry, type HostEvent, type StaticCluster } from './harness.js';
import { clusterDriver } from './proxy-cluster.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 60_000;
const TTL_MS = 2000;

(backend ? describe : describe.skip)('idle proxies with heartbeats', () => {
  let cluster: StaticCluster | undefined;
  let driver: { client: cassandra.Client; events: HostEvent[]; warnings: string[] } | undefined;

  beforeAll(async () => {
    cluster = await startStaticCluster(backend!, {
      ids: ['proxy-a', 'proxy-b'],
      name: 'idle-heartbeats',
      proxy: { heartbeat: { interval: '100ms', ttl: `${TTL_MS}ms` } },
    });
    driver = await clusterDriver(cluster, backend!, 'proxy-a');
  }, TIMEOUT);

  afterAll(async () => {
    await driver?.client.shutdown();
    await cluster?.stop();
  }, TIMEOUT);

  it(
    'every member stays up for several ttls of beats with an unchanged payload, and the driver hears no DOWN',
    async () => {
      // Not a wait for a condition but the window the defect needs: a stale copy expires one ttl
      // after the last event, and the next reconcile is far later.
      const until = Date.now() + 2.5 * TTL_MS;
      const seenDown = new Set<string>();
      while (Date.now() < until) {
        for (const [id, running] of cluster!.proxies) {
          for (const m of running.proxy.topology().members as { id: string; up: boolean; alive: boolean }[]) {
            if (!m.up) seenDown.add(`${id} saw ${m.id} down (alive ${m.alive})`);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect([...seenDown]).toEqual([]);
      expect(driver!.events.filter((e) => e.type === 'hostDown')).toEqual([]);
      expect(driver!.warnings.filter((w) => /status change to DOWN/.test(w))).toEqual([]);
      // The cluster still answers through both proxies.
      const result = await driver!.client.execute('SELECT peer FROM system.peers');
      expect(result.rows).toHaveLength(1);
    },
    TIMEOUT,
  );
});
