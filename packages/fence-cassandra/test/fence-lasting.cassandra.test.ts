// What must not undo a fence (testenv `cassandra`): a table default TTL must not expire it, and a
// write whose answer is lost after Cassandra applied it must be reported as outcome-unknown, not as
// a plain failure the caller would take for "not applied".
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { eventually } from '@muster/core/testing';
import { CassandraFence, FenceOutcomeUnknownError, StaleTokenError } from '@muster/fence-cassandra';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { closeTaskClient, connectTaskClient, createTaskTable, keyspace, readState, relayTo } from './fence-scenarios.js';

const backend = testServer<{ contactPoints: string[]; localDataCenter: string }>('cassandra');
const TIMEOUT = 120_000;

const setState = (table: string, id: string, value: string) => ({
  query: `UPDATE ${keyspace}.${table} SET state = ? WHERE scheduler = ? AND id = ?`,
  params: [value, 's1', id],
});

(backend ? describe : describe.skip)('CassandraFence: what must not undo the fence', () => {
  let client: cassandra.Client;

  beforeAll(async () => {
    client = await connectTaskClient({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
  }, TIMEOUT);

  afterAll(() => closeTaskClient(client), TIMEOUT);

  it(
    'on a table with default_time_to_live the fence never expires (the data keeps its TTL), so a stale write stays refused; ensureSchema warns',
    async () => {
      const table = await createTaskTable(client);
      await client.execute(`ALTER TABLE ${keyspace}.${table} WITH default_time_to_live = 2`);
      const fence = new CassandraFence(client, { keyspace, table, partitionKey: ['scheduler'] });
      const emitWarning = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
      try {
        await fence.ensureSchema();
        expect(emitWarning.mock.calls).toEqual([
          [
            expect.stringMatching(/default_time_to_live = 2 s; the fence is written with USING TTL 0/),
            { type: 'MusterWarning', code: 'MUSTER_FENCE_TABLE_TTL' },
          ],
        ]);
      } finally {
        emitWarning.mockRestore();
      }
      const ttls = async () =>
        (await client.execute(`SELECT ttl(state) AS data, ttl(fence) AS fence FROM ${keyspace}.${table} WHERE scheduler = 's1'`)).rows[0];
      // Both forms of the condition: the first write (IF fence = null), then a later one (IF fence <= token).
      for (const token of [4n, 5n]) {
        await fence.write({ name: 'l', token }, ['s1'], [setState(table, 'task-1', 'new')]);
        expect(await ttls()).toMatchObject({ fence: null, data: expect.any(Number) }); // the caller's statement keeps the table's TTL
      }

      await eventually(
        'the row to expire',
        async () => ((await readState(client, table, 's1', 'task-1')) === undefined ? true : undefined),
        30_000,
      );
      expect(await fence.readToken(['s1'])).toBe(5n);
      await expect(fence.write({ name: 'l', token: 3n }, ['s1'], [setState(table, 'task-2', 'stale')])).rejects.toBeInstanceOf(
        StaleTokenError,
      );
      expect(await readState(client, table, 's1', 'task-2')).toBeUndefined();
    },
    TIMEOUT,
  );

  it(
    'the fence-only row that a fenced delete of the last row leaves is what the README says: plain reads return it, a clustering bound or count(id) skip it',
    async () => {
      const table = await createTaskTable(client);
      const fence = new CassandraFence(client, { keyspace, table, partitionKey: ['scheduler'] });
      await fence.ensureSchema();
      await fence.write({ name: 'l', token: 1n }, ['s1'], [setState(table, 'task-0', 'done')]);
      const remove = { query: `DELETE FROM ${keyspace}.${table} WHERE scheduler = ? AND id = ?`, params: ['s1', 'task-0'] };
      await fence.write({ name: 'l', token: 1n }, ['s1'], [remove]);
      const select = async (columns: string, bound = '') =>
        (await client.execute(`SELECT ${columns} FROM ${keyspace}.${table} WHERE scheduler = 's1'${bound}`)).rows;
      expect(await select('id, state')).toMatchObject([{ id: null, state: null }]);
      expect(String((await select('count(*)'))[0]?.['count'])).toBe('1');
      expect(String((await select('count(id)'))[0]?.['system.count(id)'])).toBe('0');
      expect(await select('id, state', " AND id >= ''")).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'a batch Cassandra applied whose answer is lost with the connection is FenceOutcomeUnknownError, and the serial read finds the token',
    async () => {
      const relay = await relayTo(backend!.contactPoints[0]!);
      const viaRelay = new cassandra.Client({
        contactPoints: [relay.address],
        localDataCenter: backend!.localDataCenter,
        socketOptions: { readTimeout: 60_000 },
        pooling: { coreConnectionsPerHost: { [cassandra.types.distance.local]: 1 } },
      });
      try {
        await viaRelay.connect();
        const table = await createTaskTable(client);
        const fence = new CassandraFence(viaRelay, { keyspace, table, partitionKey: ['scheduler'] });
        await fence.ensureSchema();
        await fence.write({ name: 'l', token: 5n }, ['s1'], [setState(table, 'task-1', 'v5')]);

        relay.setDelay({ downstream: 600_000 }); // Cassandra's answers stop reaching the client
        const write6 = fence.write({ name: 'l', token: 6n }, ['s1'], [setState(table, 'task-1', 'v6')]).catch((e: unknown) => e);
        const direct = new CassandraFence(client, { keyspace, table, partitionKey: ['scheduler'] });
        await eventually('token 6 to be applied', async () => ((await direct.readToken(['s1'])) === 6n ? true : undefined), 30_000);
        relay.dropConnections();

        const error = await write6;
        expect(error).toBeInstanceOf(FenceOutcomeUnknownError);
        expect((error as FenceOutcomeUnknownError).cause).toMatchObject({ isSocketError: true });
        expect(await readState(client, table, 's1', 'task-1')).toBe('v6');
      } finally {
        await viaRelay.shutdown();
        await relay.close();
      }
    },
    TIMEOUT,
  );
});
