// The fence through the Muster CQL proxy (one static-membership proxy in front of the testenv
// Cassandra, as a scheduler reaches its data): LWT batches, their not-applied answers and the fence
// read at SERIAL pass through the proxy unchanged.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import pino from 'pino';
import { startProxy, type ProxyHandle } from '@muster/cql-proxy';
import { CassandraFence, FenceOutcomeUnknownError, StaleTokenError } from '@muster/fence-cassandra';
import { testServer } from '../../../scripts/testenv/state.mjs';
import {
  closeTaskClient,
  connectTaskClient,
  createTaskTable,
  fencedWriter,
  plainWriter,
  keyspace,
  readState,
  relayTo,
  staleHolderScenario,
} from './fence-scenarios.js';

const backend = testServer<{ contactPoints: string[]; localDataCenter: string }>('cassandra');
// Generous bounds: the shared server answers slowly when the machine is loaded (DDL most of all).
const TIMEOUT = 300_000;

(backend ? describe : describe.skip)('CassandraFence through the Muster CQL proxy', () => {
  let proxy: ProxyHandle;
  let client: cassandra.Client;

  beforeAll(async () => {
    proxy = await startProxy(
      {
        discovery: { adapter: 'static', options: { members: [{ id: 'fence-0', address: '127.0.0.1', port: 1 }], self: 'fence-0' } },
        proxy: { listen: { port: 0 }, http: { port: 0 }, backend: { contactPoints: backend!.contactPoints } },
      },
      { logger: pino({ level: 'warn' }) },
    );
    client = await connectTaskClient({
      contactPoints: [`127.0.0.1:${proxy.port}`],
      localDataCenter: backend!.localDataCenter,
      protocolOptions: { port: proxy.port },
    });
  }, TIMEOUT);

  afterAll(async () => {
    await closeTaskClient(client);
    await proxy?.close();
  }, TIMEOUT);

  it(
    'first write, equal token, and the stale holder refused by Cassandra with both tokens',
    async () => {
      const table = await createTaskTable(client);
      const { fence, write } = await fencedWriter(client, table);
      const a = { name: 'proxy-lock', token: 10n };
      const b = { name: 'proxy-lock', token: 11n };
      const { error, state } = await staleHolderScenario(client, table, write, a, b);
      expect(error).toBeInstanceOf(StaleTokenError);
      expect(error).toMatchObject({ code: 'MUSTER_LOCK_LOST', writerToken: 10n, storedToken: 11n });
      expect(state).toBe('b');
      await write(b, 's1', 'task-1', 'b-again');
      expect(await readState(client, table, 's1', 'task-1')).toBe('b-again');
      expect(await fence.readToken(['s1'])).toBe(11n);
    },
    TIMEOUT,
  );

  it(
    'a batch the proxy forwarded but got no answer for within its requestTimeout (it answers Overloaded) is FenceOutcomeUnknownError: Cassandra applied it',
    async () => {
      const relay = await relayTo(backend!.contactPoints[0]!);
      const slow = await startProxy(
        {
          discovery: { adapter: 'static', options: { members: [{ id: 'fence-1', address: '127.0.0.1', port: 1 }], self: 'fence-1' } },
          proxy: {
            listen: { port: 0 },
            http: { port: 0 },
            // Its backend requests time out long before it would call the node sick and close the client's connection.
            backend: { contactPoints: [relay.address], requestTimeout: 500, probeInterval: 60_000, probeTimeout: 60_000 },
          },
        },
        { logger: pino({ level: 'silent' }) },
      );
      const viaSlow = new cassandra.Client({
        contactPoints: [`127.0.0.1:${slow.port}`],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port: slow.port },
        socketOptions: { readTimeout: 60_000 },
      });
      try {
        await viaSlow.connect();
        const table = await createTaskTable(client);
        const options = { keyspace, table, partitionKey: ['scheduler'] };
        const fence = new CassandraFence(viaSlow, options);
        await fence.ensureSchema();
        const set = (value: string) => [
          { query: `UPDATE ${keyspace}.${table} SET state = ? WHERE scheduler = ? AND id = ?`, params: [value, 's1', 'task-1'] },
        ];
        await fence.write({ name: 'l', token: 5n }, ['s1'], set('v5'));

        relay.setDelay({ downstream: 600_000 }); // Cassandra's answers stop reaching the proxy
        const error = await fence.write({ name: 'l', token: 6n }, ['s1'], set('v6')).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(FenceOutcomeUnknownError);
        expect((error as FenceOutcomeUnknownError).cause).toMatchObject({ code: 0x1001 });
        // Read through the direct connection at SERIAL: the batch was applied.
        expect(await new CassandraFence(client, options).readToken(['s1'])).toBe(6n);
        expect(await readState(client, table, 's1', 'task-1')).toBe('v6');
      } finally {
        await viaSlow.shutdown();
        await slow.close();
        await relay.close();
      }
    },
    TIMEOUT,
  );

  it(
    'control: through the proxy too, plain writes let the stale holder overwrite',
    async () => {
      const table = await createTaskTable(client);
      const { error, state } = await staleHolderScenario(
        client,
        table,
        plainWriter(client, table),
        { name: 'l', token: 1n },
        { name: 'l', token: 2n },
      );
      expect(error).toBeUndefined();
      expect(state).toBe('a-stale');
    },
    TIMEOUT,
  );
});
