// Three proxies in front of one Cassandra: the driver discovers all three from system.peers, opens
// pools to each, hears DOWN / REMOVED_NODE when one stops or is removed, keeps working on the
// others, and hears NEW_NODE / UP when it returns. The time from each membership change to the
// driver's event is printed. cassandra-driver dials every peer at its rpc_address on the one port
// it was configured with, so the three listen on 127.0.0.1-3 (all loopback) on the same port.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeEvent } from '../../src/protocol/event.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeQuery, encodeRegister, encodeStartup } from '../../src/protocol/requests.js';
import { freePort, until, type CassandraEntry, type HostEvent } from './harness.js';
import { clusterDriver, memberHost, startProxyCluster, type ProxyCluster } from './proxy-cluster.js';
import { RawClient } from './raw-client.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 180_000;

(backend ? describe : describe.skip)('three proxies, one Cassandra, cassandra-driver', () => {
  const dir = mkdtempSync(join(tmpdir(), 'muster-three-'));
  const file = join(dir, 'members.yaml');
  const scope = `three-${Math.random()}`;
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  let port: number;
  let cluster: ProxyCluster;
  const hostOf = (id: string) => memberHost(ids, id);
  const address = (id: string) => `${hostOf(id)}:${port}`;
  let client: cassandra.Client;
  let events: HostEvent[] = [];

  const writeMembers = (present: string[]) => {
    const members = ids.filter((id) => present.includes(id)).map((id) => ({ id, address: hostOf(id), port }));
    writeFileSync(`${file}.tmp`, `members: ${JSON.stringify(members)}\n`);
    renameSync(`${file}.tmp`, file);
  };
  const connected = () =>
    client
      .getState()
      .getConnectedHosts()
      .map((h) => h.address)
      .sort();
  const workload = async (n = 20) => {
    for (let i = 0; i < n; i++) await client.execute('SELECT release_version FROM system.local', [], { isIdempotent: true });
  };

  beforeAll(async () => {
    port = await freePort(...ids.map(hostOf));
    writeMembers(ids);
    // Converged: every instance shows all three up before the driver connects.
    cluster = await startProxyCluster(backend!, {
      ids,
      port,
      member: (id) => ({
        membersFile: file,
        scope,
        proxy: { instanceId: id, heartbeat: { interval: '200ms', ttl: '1500ms' }, events: { debounce: '100ms', reconcile: '2s' } },
      }),
    });
    ({ client, events } = await clusterDriver(cluster, backend!, 'proxy-a', {
      reconnection: new cassandra.policies.reconnection.ConstantReconnectionPolicy(300),
    }));
  }, TIMEOUT);

  afterAll(async () => {
    await client?.shutdown();
    await cluster?.stop();
  }, TIMEOUT);

  it(
    'the driver discovers all three from system.peers and opens pools to each',
    async () => {
      // Instances that started after the first reach it as NEW_NODE once their heartbeats are seen.
      await until("all three in the driver's metadata", () => client.hosts.length === 3);
      expect(client.hosts.keys().sort()).toEqual(ids.map(address).sort());
      await until('pools to all three', () => connected().length === 3);
      const hosts = client.hosts.values();
      expect(new Set(hosts.map((h) => h.hostId.toString())).size).toBe(3);
      expect(hosts.every((h) => h.datacenter === backend!.localDataCenter)).toBe(true);
      expect(hosts.every((h) => h.tokens.length === 8)).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'a stopped proxy drains: peers remove it (the driver drops its pool); the driver keeps working; it comes back as a new node',
    async () => {
      const victim = 'proxy-c';
      const stoppedAt = Date.now();
      await cluster.stopMember(victim);
      const gone = await until('hostRemove for the drained proxy', () =>
        events.find((e) => e.type === 'hostRemove' && e.address === address(victim) && e.at >= stoppedAt),
      );
      console.log(`stop → driver hostRemove: ${gone.at - stoppedAt} ms`);
      await workload();
      const restartedAt = Date.now();
      await cluster.start(victim);
      const back = await until(
        'hostAdd for the restarted proxy',
        () => events.find((e) => e.type === 'hostAdd' && e.address === address(victim) && e.at >= restartedAt),
        60_000,
      );
      console.log(`restart → driver hostAdd: ${back.at - restartedAt} ms`);
      await until('a pool to the restarted proxy', () => connected().includes(address(victim)), 60_000);
      await workload();
    },
    TIMEOUT,
  );

  it(
    'a proxy removed from membership is REMOVED_NODE; added back, NEW_NODE; the driver uses it again',
    async () => {
      const victim = 'proxy-b';
      const removedAt = Date.now();
      writeMembers(ids.filter((id) => id !== victim));
      const removed = await until('hostRemove', () =>
        events.find((e) => e.type === 'hostRemove' && e.address === address(victim) && e.at >= removedAt),
      );
      console.log(`membership removal → driver hostRemove: ${removed.at - removedAt} ms`);
      expect(client.hosts.keys()).not.toContain(address(victim));
      await workload();
      const addedAt = Date.now();
      writeMembers(ids);
      const added = await until('hostAdd', () =>
        events.find((e) => e.type === 'hostAdd' && e.address === address(victim) && e.at >= addedAt),
      );
      console.log(`membership add → driver hostAdd: ${added.at - addedAt} ms`);
      await until('a pool to the re-added proxy', () => connected().includes(address(victim)), 60_000);
      await workload();
    },
    TIMEOUT,
  );

  it(
    'a proxy that still serves but whose heartbeat goes stale is reported DOWN to registered clients',
    async () => {
      const victim = 'proxy-c';
      const watcher = await RawClient.registered(address('proxy-a'), ['STATUS_CHANGE', 'TOPOLOGY_CHANGE']);
      // Its heartbeat store stops (as when its backend is cut off); its CQL port stays open.
      const staleFrom = Date.now();
      await cluster.proxies.get(victim)!.muster.heartbeat.close();
      // Events about the other members, or a late UP about the victim after the previous tests'
      // restart and re-add, may still arrive; what must come is the victim's DOWN.
      const deadline = Date.now() + 15_000;
      let event: ReturnType<typeof decodeEvent> | undefined;
      while (!event || !('address' in event) || event.address.address !== hostOf(victim) || ('change' in event && event.change === 'UP')) {
        const frame = await watcher.next(-1, Math.max(1, deadline - Date.now()));
        expect(frame?.opcode).toBe(Opcode.EVENT);
        event = decodeEvent(frame!.body);
      }
      expect(event).toMatchObject({ type: 'STATUS_CHANGE', change: 'DOWN', address: { address: hostOf(victim), port } });
      console.log(`last heartbeat → STATUS_CHANGE DOWN on a registered client: ${Date.now() - staleFrom} ms (ttl 1500 ms)`);
      watcher.close();
    },
    TIMEOUT,
  );

  it(
    'a client that REGISTERs after reading the tables is told what changed in between',
    async () => {
      const late = 'proxy-b';
      const watcher = await RawClient.open(address('proxy-a'));
      watcher.send(4, 1, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
      expect((await watcher.next(1))?.opcode).toBe(Opcode.READY);
      watcher.send(4, 2, Opcode.QUERY, encodeQuery({ query: 'SELECT peer FROM system.peers', parameters: { consistency: 1 } }, 4));
      expect((await watcher.next(2))?.opcode).toBe(Opcode.RESULT);
      // Between the read and the REGISTER, a member leaves.
      writeMembers(ids.filter((id) => id !== late));
      await until(
        'proxy-a to drop proxy-b',
        () => !(cluster.proxies.get('proxy-a')!.proxy.topology().members as { id: string }[]).some((m) => m.id === late),
      );
      watcher.send(4, 3, Opcode.REGISTER, encodeRegister({ eventTypes: ['TOPOLOGY_CHANGE'] }));
      expect((await watcher.next(3))?.opcode).toBe(Opcode.READY);
      const event = decodeEvent((await watcher.next(-1, 5000))!.body);
      expect(event).toMatchObject({ type: 'TOPOLOGY_CHANGE', change: 'REMOVED_NODE', address: { address: hostOf(late), port } });
      // REGISTER again: the removal was told once (it was told again, a duplicate REMOVED_NODE). A
      // catch-up event goes out right behind the READY, so one would be in before OPTIONS is answered.
      watcher.send(4, 4, Opcode.REGISTER, encodeRegister({ eventTypes: ['TOPOLOGY_CHANGE'] }));
      expect((await watcher.next(4))?.opcode).toBe(Opcode.READY);
      watcher.send(4, 5, Opcode.OPTIONS, Buffer.alloc(0));
      expect((await watcher.next(5))?.opcode).toBe(Opcode.SUPPORTED);
      expect(await watcher.next(-1, 0).catch(() => 'none')).toBe('none');
      watcher.close();
      writeMembers(ids);
    },
    TIMEOUT,
  );
});
