// Two drivers that build the ring themselves, nobody else's tests drive, through three proxies on
// distinct addresses and one port, both connected at once:
// - the Apache gocql v2 (github.com/apache/cassandra-gocql-driver/v2, test/drivers/gocql2) with
//   TokenAwareHostPolicy over DCAwareRoundRobinPolicy, protocol negotiated (v5) and LZ4 segments;
// - the DataStax Java driver 3.x (cassandra-driver-core, test/drivers/java3), which builds its
//   metadata its own way, TokenAwarePolicy over DCAwareRoundRobinPolicy, protocol V3 forced and
//   SNAPPY frame compression.
// The proxies run with `peersV2: false`, as a pre-4.0 server: both read system.peers (gocql v2
// never reads peers_v2; the Java driver 3.11 does when it exists and falls back on its error).
// Each must see only the proxies (host ids, DC, rack, 8 tokens each, the token map), read schema
// metadata through them, route token-aware to them, get events, and follow a proxy stopped and
// started again.
import cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { javaDriver3Jars } from '../../../../scripts/testenv/drivers.mjs';
import { GOCQL2_VERSION, gocql2Check } from '../../../../scripts/testenv/gocql2.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { converged, freePort, startProxy, until, type CassandraEntry, type RunningProxy } from '../proxy/harness.js';
import { CheckProgram } from './check-program.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 240_000;
const BUILD_TIMEOUT = 15 * 60_000;
const javaSource = fileURLToPath(new URL('./java3/DriverCheck3.java', import.meta.url));

const gocql2 = testTool('gocql2');
const java = testTool('java-driver');

interface Node {
  address: string;
  hostId: string;
  dc: string;
  rack: string;
  tokens: number;
  up: boolean;
}
interface Report {
  nodes: Node[];
  /** gocql: EVENT frames read, per connection; Java: host listener calls, "down 127.0.0.93:port". */
  events: Record<string, number>;
  /** gocql only: the frames it has read, by protocol version ("v5"). */
  versions?: Record<string, number>;
  keyspaces: string[];
  tables?: string[];
  error?: string;
  // Java 3 only
  tokenRanges?: number;
  replicas?: string[];
  partitioner?: string;
  schemaAgreement?: boolean;
}
interface Work {
  ok: number;
  coordinators: Record<string, number>;
  localHostIds: Record<string, string>;
  errors: string[];
}

function exec(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 180_000 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${cmd} ${args.join(' ')}: ${error.message}\n${stderr.slice(-4000)}`));
      else resolve();
    });
  });
}

(backend && gocql2 && java ? describe : describe.skip)('gocql v2 and the Java driver 3.x through three proxies', () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  const hostOf = (id: string) => `127.0.0.${91 + ids.indexOf(id)}`;
  const scope = `ring-drivers-${process.pid}-${Date.now()}`;
  const keyspace = `ring_drivers_${process.pid}`;
  const proxies = new Map<string, RunningProxy>();
  const drivers = new Map<'gocql2' | 'java3', CheckProgram>();
  let port: number;
  let classes: string | undefined;

  const start = async (id: string) => {
    const members = ids.map((m) => ({ id: m, address: hostOf(m), port }));
    const proxy = { instanceId: id, heartbeat: { interval: '200ms', ttl: '3s' }, shutdown: { grace: '3s' }, peersV2: false };
    proxies.set(id, await startProxy(backend!, { id, host: hostOf(id), port, members, scope, proxy }));
  };
  const endpoint = (id: string) => `${hostOf(id)}:${port}`;
  const hostIds = () =>
    new Map(
      proxies
        .get('proxy-a')!
        .proxy.topology()
        .members.map((m) => [`${m.address}:${m.port}`, m.hostId]),
    );
  const driver = (name: 'gocql2' | 'java3') => drivers.get(name)!;

  beforeAll(async () => {
    const [bin, jars] = await Promise.all([gocql2Check(), javaDriver3Jars()]);
    classes = mkdtempSync(join(tmpdir(), 'muster-java-driver3-'));
    await exec('javac', ['-cp', join(jars.dir, '*'), '-d', classes, javaSource]);
    port = await freePort(...ids.map(hostOf));
    for (const id of ids) await start(id);
    await converged(proxies.values(), ids.length);
    const dc = backend!.localDataCenter;
    drivers.set('gocql2', new CheckProgram('gocql v2', bin, [hostOf('proxy-a'), String(port), dc, '0', 'lz4']));
    const classpath = `${join(jars.dir, '*')}:${classes}`;
    drivers.set(
      'java3',
      new CheckProgram('Java driver 3', 'java', ['-cp', classpath, 'DriverCheck3', hostOf('proxy-a'), String(port), dc, 'V3', 'SNAPPY']),
    );
    await driver('gocql2').connected();
    const connected = await driver('java3').connected<{ protocolVersion: string }>();
    console.log(`gocql ${GOCQL2_VERSION}, cassandra-driver-core ${jars.version} (${connected.protocolVersion}, SNAPPY)`);
    expect(connected.protocolVersion).toBe('V3');
  }, BUILD_TIMEOUT);

  afterAll(async () => {
    await Promise.all([...drivers.values()].map((d) => d.stop()));
    const direct = new cassandra.Client({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
    await direct.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`).catch(() => undefined);
    await direct.shutdown();
    for (const p of proxies.values()) await p.stop().catch(() => undefined);
    if (classes) rmSync(classes, { recursive: true, force: true });
  }, TIMEOUT);

  /** A driver's report once it shows exactly `wanted` up (and no other node at all). */
  const sees = (name: 'gocql2' | 'java3', wanted: readonly string[], ks = '') =>
    until(
      `${name} sees exactly ${wanted.join(', ')} up`,
      async () => {
        const report = await driver(name).ask<Report>(`report ${ks}`);
        const nodes = report.nodes.map((n) => `${n.address}${n.up ? '' : ' (down)'}`);
        return JSON.stringify(nodes) === JSON.stringify(wanted.map(endpoint)) ? report : undefined;
      },
      60_000,
    );

  const checkRing = (report: Report) => {
    const known = hostIds();
    expect(report.nodes.map((n) => n.address)).toEqual(ids.map(endpoint));
    for (const n of report.nodes) {
      expect(n).toMatchObject({ hostId: known.get(n.address), dc: backend!.localDataCenter, rack: 'rack1', tokens: 8 });
    }
    expect(report.keyspaces).toEqual(expect.arrayContaining(['system', 'system_schema', 'system_auth']));
  };

  const checkWork = (work: Work, on: readonly string[]) => {
    expect(work.errors).toEqual([]);
    expect(work.ok).toBe(12);
    // Coordinators are proxies only, and each proxy answered system.local with its own host id.
    expect(Object.keys(work.coordinators).every((at) => on.map(endpoint).includes(at))).toBe(true);
    const known = hostIds();
    expect(Object.keys(work.localHostIds).sort()).toEqual(on.map(endpoint));
    for (const [at, hostId] of Object.entries(work.localHostIds)) expect(hostId).toBe(known.get(at));
  };

  it(
    'both see only the proxies: their host ids, DC, rack and 8 tokens each; the Java token map has 24 ranges',
    async () => {
      const gocql = await sees('gocql2', ids);
      checkRing(gocql);
      // It negotiated v5 (LZ4 segments, then) and read nothing in another version.
      expect(Object.keys(gocql.versions!)).toEqual(['v5']);
      const java3 = await sees('java3', ids);
      checkRing(java3);
      expect(java3).toMatchObject({ tokenRanges: 24, partitioner: 'org.apache.cassandra.dht.Murmur3Partitioner', schemaAgreement: true });
    },
    TIMEOUT,
  );

  it(
    'token-aware prepared writes and reads go to the proxies; schema metadata read through them names the new table',
    async () => {
      for (const name of ['gocql2', 'java3'] as const) {
        checkWork(await driver(name).ask<Work>(`work ${keyspace} 12`), ids);
        const report = await until(`${name}'s schema metadata to show ${keyspace}.kv`, async () => {
          const r = await driver(name).ask<Report>(`report ${keyspace}`);
          return r.tables?.includes('kv') ? r : undefined;
        });
        expect(report.keyspaces).toContain(keyspace);
        if (name === 'java3') expect(ids.map(endpoint)).toEqual(expect.arrayContaining(report.replicas!));
      }
    },
    TIMEOUT,
  );

  it(
    'a proxy stopped and started again: both hear it, work on the others, and take it back',
    async () => {
      const eventsBefore = (await driver('gocql2').ask<Report>('report')).events;
      await proxies.get('proxy-c')!.stop();
      proxies.delete('proxy-c');
      for (const name of ['gocql2', 'java3'] as const) {
        await sees(name, ['proxy-a', 'proxy-b']);
        const without = await driver(name).ask<Work>(`work ${keyspace} 12`);
        checkWork(without, ['proxy-a', 'proxy-b']);
        expect(Object.keys(without.coordinators)).not.toContain(endpoint('proxy-c'));
      }

      await start('proxy-c');
      await converged(proxies.values(), ids.length);
      for (const name of ['gocql2', 'java3'] as const) {
        await sees(name, ids);
        // A host shown up may still be opening its pool: a failed round is tried again, and the last
        // one is named if none succeeds.
        let last: Work | undefined;
        const back = await until(
          `${name} sends to proxy-c again with no error`,
          async () => {
            last = await driver(name).ask<Work>(`work ${keyspace} 12`);
            return last.errors.length === 0 && last.coordinators[endpoint('proxy-c')] ? last : undefined;
          },
          60_000,
        ).catch((error: Error) => {
          throw new Error(`${error.message}; last round: ${JSON.stringify(last)}`);
        });
        checkWork(back, ids);
      }
      // gocql heard it over its control connection (EVENT frames), the Java driver through its host listener.
      const eventsAfter = (await driver('gocql2').ask<Report>('report')).events;
      const total = (events: Record<string, number>) => Object.values(events).reduce((a, b) => a + b, 0);
      expect(total(eventsAfter)).toBeGreaterThan(total(eventsBefore));
      const javaEvents = (await driver('java3').ask<Report>('report')).events;
      expect(javaEvents[`remove ${endpoint('proxy-c')}`]).toBeGreaterThanOrEqual(1);
      expect(javaEvents[`add ${endpoint('proxy-c')}`]).toBeGreaterThanOrEqual(2);
    },
    TIMEOUT,
  );
});
