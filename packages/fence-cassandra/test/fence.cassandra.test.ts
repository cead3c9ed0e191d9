// Fenced writes refused by the real Cassandra (the testenv `cassandra` node), and the control: the
// same statements without the fence let the stale write through, so these assertions can fail.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { createMuster, InvalidArgumentError, MusterError, StaleTokenError as CoreStaleTokenError } from '@muster/core';
import { CassandraFence, StaleTokenError } from '@muster/fence-cassandra';
import { testServer } from '../../../scripts/testenv/state.mjs';
import {
  closeTaskClient,
  connectTaskClient,
  createTaskTable,
  fencedWriter,
  keyspace,
  plainWriter,
  readState,
  staleHolderScenario,
  type FenceLease,
  type Writer,
} from './fence-scenarios.js';

const backend = testServer<{ contactPoints: string[]; localDataCenter: string }>('cassandra');
// Generous bounds: the shared server answers slowly when the machine is loaded (DDL most of all).
const TIMEOUT = 300_000;

/** A seeded generator (mulberry32) for the race's delays; the seed is printed and replayable. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

(backend ? describe : describe.skip)('CassandraFence against the real Cassandra', () => {
  let client: cassandra.Client;

  beforeAll(async () => {
    client = await connectTaskClient({ contactPoints: backend!.contactPoints, localDataCenter: backend!.localDataCenter });
  }, TIMEOUT);

  afterAll(() => closeTaskClient(client), TIMEOUT);

  it(
    'refuses the write of a holder whose lock has since been taken (real leases), with both tokens; the data stays the newer holder’s',
    async () => {
      await using muster = await createMuster({ lock: { adapter: 'static' } });
      const first = await muster.lock.acquire('fence-stale', { ttl: 60_000 });
      await first.release();
      const second = await muster.lock.acquire('fence-stale', { ttl: 60_000 });
      expect(second.token).toBeGreaterThan(first.token);

      const table = await createTaskTable(client);
      const { fence, write } = await fencedWriter(client, table);
      const { error, state } = await staleHolderScenario(client, table, write, first, second);

      expect(error).toBeInstanceOf(StaleTokenError);
      expect(error).toBeInstanceOf(CoreStaleTokenError);
      expect(MusterError.is(error, 'MUSTER_LOCK_LOST')).toBe(true);
      const stale = error as StaleTokenError;
      expect(stale.writerToken).toBe(first.token);
      expect(stale.storedToken).toBe(second.token);
      expect(stale.message).toContain(`token ${first.token} is below the stored fence ${second.token}`);
      expect(state).toBe('b');
      expect(await fence.readToken(['s1'])).toBe(second.token);
      await second.release();
    },
    TIMEOUT,
  );

  it(
    'control: the same sequence as plain writes (no fence) accepts the stale write and loses the newer holder’s data',
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

  it(
    'first write to a partition (no fence yet) is applied and sets the fence; other partitions keep none',
    async () => {
      const table = await createTaskTable(client);
      const { fence, write } = await fencedWriter(client, table);
      expect(await fence.readToken(['s1'])).toBeUndefined();
      await write({ name: 'l', token: 7n }, 's1', 'task-1', 'first');
      expect(await readState(client, table, 's1', 'task-1')).toBe('first');
      expect(await fence.readToken(['s1'])).toBe(7n);
      expect(await fence.readToken(['s2'])).toBeUndefined();
      // A lower token on another partition is a first write there: fences are per partition.
      await write({ name: 'l', token: 3n }, 's2', 'task-1', 'other');
      expect(await fence.readToken(['s2'])).toBe(3n);
    },
    TIMEOUT,
  );

  it(
    'the same holder writing again with an equal token is accepted; a write with no statements only advances the fence',
    async () => {
      const table = await createTaskTable(client);
      const { fence, write } = await fencedWriter(client, table);
      const lease = { name: 'l', token: 1_764_000_000_000_000n };
      await write(lease, 's1', 'task-1', 'one');
      await write(lease, 's1', 'task-1', 'two');
      await write(lease, 's1', 'task-2', 'three');
      expect(await readState(client, table, 's1', 'task-1')).toBe('two');
      expect(await readState(client, table, 's1', 'task-2')).toBe('three');
      await fence.write({ name: 'l', token: lease.token + 1n }, ['s1'], []);
      await expect(write(lease, 's1', 'task-1', 'late')).rejects.toBeInstanceOf(StaleTokenError);
      expect(await readState(client, table, 's1', 'task-1')).toBe('two');
    },
    TIMEOUT,
  );

  it(
    'two writers racing with interleaved tokens: the final state is the highest token’s, and a writer once refused stays refused',
    async () => {
      const seed = Number(process.env.MUSTER_FENCE_SEED ?? Date.now() % 2 ** 31);
      console.log(`fence race: seed ${seed} (MUSTER_FENCE_SEED=${seed} replays it)`);
      const random = seeded(seed);
      const table = await createTaskTable(client);
      const { fence, write } = await fencedWriter(client, table);
      // The lock changes hands A, B, A, B, A, B; each writer writes with its newest token at its own pace.
      const plan = { a: [1n, 3n, 5n], b: [2n, 4n, 6n] };
      const outcomes: { who: string; token: bigint; value: string; refusedBy?: bigint }[] = [];
      const run = async (who: 'a' | 'b') => {
        for (const token of plan[who]) {
          for (let i = 0; i < 3; i++) {
            await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 20)));
            const value = `${who}-${token}-${i}`;
            const outcome: (typeof outcomes)[number] = { who, token, value };
            try {
              await write({ name: 'race', token }, 's1', 'task-1', value);
            } catch (error) {
              if (!(error instanceof StaleTokenError)) throw error;
              expect(error.storedToken).toBeGreaterThan(token);
              outcome.refusedBy = error.storedToken;
            }
            outcomes.push(outcome);
          }
        }
      };
      await Promise.all([run('a'), run('b')]);
      // A straggler from the lower token, arriving after everything: whatever the race's order was,
      // it must be refused (without the fence it would be the final state).
      await expect(write({ name: 'race', token: 5n }, 's1', 'task-1', 'a-straggler')).rejects.toMatchObject({
        writerToken: 5n,
        storedToken: 6n,
      });

      expect(await fence.readToken(['s1'])).toBe(6n);
      // Token 6 is the highest, so none of its writes can be refused, and its last write is the state.
      expect(outcomes.filter((o) => o.token === 6n && o.refusedBy !== undefined)).toEqual([]);
      expect(await readState(client, table, 's1', 'task-1')).toBe('b-6-2');
      for (const who of ['a', 'b']) {
        // The fence only rises: after a refusal by token s, no write of this writer below s is accepted.
        let refusedAt = -1n;
        for (const o of outcomes.filter((x) => x.who === who)) {
          if (o.refusedBy !== undefined) refusedAt = o.refusedBy > refusedAt ? o.refusedBy : refusedAt;
          else expect(o.token >= refusedAt).toBe(true);
        }
      }
    },
    TIMEOUT,
  );

  it(
    'control: racing plain writers can leave a lower token’s write as the final state',
    async () => {
      // Deterministic version of the race: the low token's write simply arrives last.
      const table = await createTaskTable(client);
      const write: Writer = plainWriter(client, table);
      await write({ name: 'race', token: 6n }, 's1', 'task-1', 'b-6');
      await write({ name: 'race', token: 5n }, 's1', 'task-1', 'a-5');
      expect(await readState(client, table, 's1', 'task-1')).toBe('a-5');
    },
    TIMEOUT,
  );

  it(
    'ensureSchema adds a static bigint fence (a regular one without clustering columns), twice is fine, and checks the partition key',
    async () => {
      const table = await createTaskTable(client);
      const fence = new CassandraFence(client, { keyspace, table, partitionKey: ['scheduler'] });
      await Promise.all([fence.ensureSchema(), fence.ensureSchema()]);
      const kinds = async (t: string) =>
        (
          await client.execute(
            'SELECT column_name, kind, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
            [keyspace, t],
            {
              prepare: true,
            },
          )
        ).rows.find((r) => r['column_name'] === 'fence');
      expect(await kinds(table)).toMatchObject({ kind: 'static', type: 'bigint' });

      const flat = `${table}_flat`;
      await client.execute(`CREATE TABLE ${keyspace}.${flat} (id text PRIMARY KEY, state text)`);
      const flatFence = new CassandraFence(client, { keyspace, table: flat, partitionKey: ['id'] });
      await flatFence.ensureSchema();
      expect(await kinds(flat)).toMatchObject({ kind: 'regular', type: 'bigint' });
      await flatFence.write(
        { name: 'l', token: 2n },
        ['x'],
        [{ query: `UPDATE ${keyspace}.${flat} SET state = 'v' WHERE id = ?`, params: ['x'] }],
      );
      await expect(flatFence.write({ name: 'l', token: 1n }, ['x'], [])).rejects.toMatchObject({ writerToken: 1n, storedToken: 2n });

      const wrongKey = new CassandraFence(client, { keyspace, table, partitionKey: ['id'] });
      await expect(wrongKey.ensureSchema()).rejects.toThrow(/partitionKey \(id\) is not the partition key of .*, which is \(scheduler\)/);
      const missing = new CassandraFence(client, { keyspace, table: 'no_such_table', partitionKey: ['id'] });
      await expect(missing.ensureSchema()).rejects.toThrow(/does not exist/);
    },
    TIMEOUT,
  );

  it(
    'a batch Cassandra refuses (a statement on another partition) is an InvalidArgumentError naming the fix, and nothing is applied',
    async () => {
      const table = await createTaskTable(client);
      const { fence } = await fencedWriter(client, table);
      const other = { query: `UPDATE ${keyspace}.${table} SET state = ? WHERE scheduler = ? AND id = ?`, params: ['x', 's2', 'task-1'] };
      const error = await fence.write({ name: 'l', token: 1n } satisfies FenceLease, ['s1'], [other]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(/cannot span multiple partitions.*every statement must write partition \(scheduler\)/);
      expect((error as Error).cause).toBeDefined();
      expect(await fence.readToken(['s1'])).toBeUndefined();
      expect(await readState(client, table, 's2', 'task-1')).toBeUndefined();
    },
    TIMEOUT,
  );
});
