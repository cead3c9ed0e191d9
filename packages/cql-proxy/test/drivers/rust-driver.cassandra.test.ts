// The Rust `scylla` driver (1.9, crates.io; test/drivers/rust, built into the testenv cache)
// through three proxies on distinct addresses and one port, as that driver dials every peer on its
// control connection's port. It must see only the proxies (their host ids, DC, 8 tokens each),
// route token-aware writes and reads to them, read schema metadata through them, and keep working
// while one proxy is stopped and started again, which only events and its own refresh tell it.
//
// The first build of the check program takes minutes (20 on a busy 2-core machine), so it is built
// only with MUSTER_RUST_DRIVER=build; otherwise a cached build runs, or the file skips saying so.
import cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { rustDriverCheck } from '../../../../scripts/testenv/rust-driver.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { converged, freePort, startProxy, until, type CassandraEntry, type RunningProxy } from '../proxy/harness.js';
import { CheckProgram } from './check-program.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 240_000;
const BUILD_TIMEOUT = 45 * 60_000;

const runnable = backend && testTool('rust-driver');

interface Node {
  address: string;
  hostId: string;
  dc: string;
  rack: string;
  tokens: number;
  connected: boolean;
}
interface Report {
  nodes: Node[];
  keyspaces: string[];
}
interface Work {
  ok: number;
  coordinators: Record<string, number>;
  localHostIdMatches: Record<string, number>;
  errors: string[];
}

(backend && runnable ? describe : describe.skip)('Rust scylla driver through three proxies', () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  const hostOf = (id: string) => `127.0.0.${71 + ids.indexOf(id)}`;
  const scope = `rust-driver-${process.pid}-${Date.now()}`;
  const proxies = new Map<string, RunningProxy>();
  let port: number;
  let driver: CheckProgram;
  const keyspace = `rust_${process.pid}`;

  const start = async (id: string) => {
    const members = ids.map((m) => ({ id: m, address: hostOf(m), port }));
    const proxy = { instanceId: id, heartbeat: { interval: '200ms', ttl: '3s' }, shutdown: { grace: '3s' } };
    proxies.set(id, await startProxy(backend!, { id, host: hostOf(id), port, members, scope, proxy }));
  };
  const hostIds = () =>
    new Map(
      proxies
        .get('proxy-a')!
        .proxy.topology()
        .members.map((m) => [`${m.address}:${m.port}`, m.hostId]),
    );
  const endpoint = (id: string) => `${hostOf(id)}:${port}`;

  beforeAll(async () => {
    const bin = await rustDriverCheck();
    port = await freePort();
    for (const id of ids) await start(id);
    await converged(proxies.values(), ids.length);
    driver = new CheckProgram('the Rust check program', bin, [endpoint('proxy-a')], { ...process.env, RUST_LOG: 'off' });
    await driver.connected();
  }, BUILD_TIMEOUT);

  afterAll(async () => {
    await driver?.stop();
    const direct = new cassandra.Client({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
    await direct.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await direct.shutdown();
    for (const p of proxies.values()) await p.stop().catch(() => undefined);
  }, TIMEOUT);

  /** The driver's view once every listed proxy is known and connected, and no other node is. */
  const sees = (wanted: readonly string[]) =>
    until(
      `the driver sees exactly ${wanted.join(', ')} connected`,
      async () => {
        const report = await driver.ask<Report>('report');
        const connected = report.nodes.filter((n) => n.connected).map((n) => n.address);
        return JSON.stringify(connected) === JSON.stringify(wanted.map(endpoint)) ? report : undefined;
      },
      60_000,
    );

  it(
    'sees only the proxies: their host ids, DC, rack and 8 tokens each; schema metadata comes through them',
    async () => {
      const report = await sees(ids);
      const known = hostIds();
      expect(report.nodes.map((n) => n.address)).toEqual(ids.map(endpoint));
      for (const n of report.nodes) {
        expect(n).toMatchObject({ hostId: known.get(n.address), dc: backend!.localDataCenter, rack: 'rack1', tokens: 8 });
      }
      expect(report.keyspaces).toEqual(expect.arrayContaining(['system', 'system_schema', 'system_auth']));
    },
    TIMEOUT,
  );

  it(
    'token-aware prepared writes and reads go to the proxies and all succeed; each proxy answers system.local with its own host id',
    async () => {
      const work = await driver.ask<Work>(`work ${keyspace} 12`);
      expect(work.errors).toEqual([]);
      expect(work.ok).toBe(12);
      expect(Object.keys(work.coordinators).every((at) => ids.map(endpoint).includes(at))).toBe(true);
      expect(Object.keys(work.localHostIdMatches).every((k) => k.endsWith(':true'))).toBe(true);
      const report = await driver.ask<Report>('report');
      expect(report.keyspaces).toContain(keyspace);
    },
    TIMEOUT,
  );

  it(
    'a proxy stopped and started again: the driver drops it, works on the others, and takes it back',
    async () => {
      await proxies.get('proxy-c')!.stop();
      proxies.delete('proxy-c');
      await sees(['proxy-a', 'proxy-b']);
      const without = await driver.ask<Work>(`work ${keyspace} 12`);
      expect(without.errors).toEqual([]);
      expect(Object.keys(without.coordinators)).not.toContain(endpoint('proxy-c'));

      await start('proxy-c');
      await converged(proxies.values(), ids.length);
      await sees(ids);
      const back = await until(
        'the driver sends to proxy-c again',
        async () => {
          const work = await driver.ask<Work>(`work ${keyspace} 12`);
          expect(work.errors).toEqual([]);
          return work.coordinators[endpoint('proxy-c')] ? work : undefined;
        },
        60_000,
      );
      expect(back.ok).toBe(12);
    },
    TIMEOUT,
  );
});
