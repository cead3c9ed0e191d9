// The drain's way of moving cassandra-driver's control connection (leaving.ts), pinned faster than
// the rolling restart: two in-process proxies, the driver's only contact point (so its control
// connection, which also carries requests) on the one that drains, a steady load of non-idempotent
// requests. The draining proxy tells that connection REMOVED_NODE about itself and shows a data
// center of its own: the driver must leave the host itself (it drains its pool there, waiting for
// the answers) rather than see the connection closed under it (it then marks the host DOWN), and no
// request may fail.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { converged, freePort, startProxy, until, type CassandraEntry, type RunningProxy } from './harness.js';
import { SteadyLoad } from './steady-load.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 120_000;

(backend ? describe : describe.skip)('draining the proxy that holds cassandra-driver’s control connection', () => {
  const scope = `drain-control-${Math.random()}`;
  let port: number;
  const members = () => [
    { id: 'proxy-a', address: '127.0.0.1', port },
    { id: 'proxy-b', address: '127.0.0.2', port },
  ];
  const proxies: RunningProxy[] = [];
  let client: cassandra.Client | undefined;

  beforeAll(async () => {
    port = await freePort('127.0.0.1', '127.0.0.2');
    for (const [i, id] of ['proxy-a', 'proxy-b'].entries()) {
      proxies.push(
        await startProxy(backend!, {
          id,
          host: `127.0.0.${i + 1}`,
          port,
          members: members(),
          scope,
          // A busy shared machine answers slowly; a backend judged sick would close connections too.
          proxy: { events: { debounce: '100ms' }, backend: { contactPoints: backend!.contactPoints, probeTimeout: '10s' } },
        }),
      );
    }
    await converged(proxies, 2);
  }, TIMEOUT);

  afterAll(async () => {
    await client?.shutdown();
    for (const p of proxies) await p.stop().catch(() => undefined);
  }, TIMEOUT);

  it(
    'the driver moves its control connection away by itself and no request fails',
    async () => {
      const said: { at: number; message: string }[] = [];
      client = new cassandra.Client({
        contactPoints: [`127.0.0.1:${port}`],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port },
      });
      client.on('log', (level: string, _source: string, message: string) => {
        if (level !== 'verbose') said.push({ at: Date.now(), message });
      });
      await client.connect();
      const driver = client;
      await until('pools to both proxies', () => driver.getState().getConnectedHosts().length === 2);
      const load = new SteadyLoad(
        driver,
        (c, i) =>
          c.execute('SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?', [`ks${i % 10}`], { prepare: true }),
        { rate: 100, maxInFlight: 200, slowMs: 5000 },
      );
      load.start();
      await until('the load to be answered', () => load.ok > 20);

      const drainedAt = Date.now();
      await proxies[0]!.stop(); // resolves once every client connection is gone
      await load.stop();
      const window = load.mark();
      const a = `127.0.0.1:${port}`;
      const about = said.filter((w) => w.at >= drainedAt && w.message.includes(a)).map((w) => w.message);
      console.log(
        `drain of the control connection's host: ${window.ok} ok, ${window.failed.length} failed; driver said ${JSON.stringify(about)}`,
      );
      // Left, not lost: the driver drained its pool to the host (it waits for the answers), and never
      // saw the host's connection fail under it (that marks the host DOWN first).
      expect(about).toContainEqual(expect.stringMatching(new RegExp(`^Draining and closing \\d+ connections to ${a}$`)));
      expect(about.filter((m) => /considered as DOWN|was closed/.test(m))).toEqual([]);
      expect(window.failed).toEqual([]);
      expect(window.ok).toBeGreaterThan(0);
      await driver.execute('SELECT release_version FROM system.local'); // the peer serves
    },
    TIMEOUT,
  );
});
