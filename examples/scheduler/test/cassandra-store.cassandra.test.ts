// The Cassandra task store against the testenv Cassandra, through a Muster CQL proxy: worker writes
// are conditioned on the task row (Cassandra refuses a worker that no longer holds the attempt), and
// a leader write with an older token is refused by Cassandra when fenced, accepted without the fence.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { StaleTokenError } from '@muster/core';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { connectCassandra, type CassandraConnection } from '../src/cassandra-connect.js';
import { violations } from './invariants.js';
import { startProxyCluster, type CassandraEntry, type ProxyCluster } from './proxy-cluster.js';

const backend = testServer<CassandraEntry>('cassandra');

(backend ? describe : describe.skip)('CassandraTaskStore through the CQL proxy', () => {
  let proxies: ProxyCluster;
  const open: CassandraConnection[] = [];
  const connect = async (fence: boolean) => {
    const scheduler = `store-test-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const connection = await connectCassandra(
      {
        contactPoints: proxies.contactPoints,
        localDataCenter: proxies.localDataCenter,
        keyspace: 'muster_scheduler',
        table: 'tasks',
        fence,
      },
      scheduler,
    );
    open.push(connection);
    await connection.createSchema();
    return connection.store;
  };

  beforeAll(async () => {
    proxies = await startProxyCluster(backend!, 1);
  }, 60_000);

  afterAll(async () => {
    for (const c of open) await c.close();
    await proxies?.close();
  }, 60_000);

  test('a worker starts and finishes only the attempt it holds; a completed task stays done whatever the leader writes', async () => {
    const store = await connect(false);
    await store.submit([{ id: 'a', durationMs: 10 }]);
    await store.submit([{ id: 'a', durationMs: 99 }]); // submitted twice: the first stays
    await store.seal(3n, 'm');
    expect(await store.assign(3n, 'm', [{ taskId: 'a', worker: 'w1', fromAttempt: 0 }])).toEqual({ applied: ['a'], conflicts: [] });
    expect(await store.start('a', 1, 'w2')).toBe(false); // not its task
    expect(await store.start('a', 1, 'w1')).toBe(true);
    expect(await store.start('a', 1, 'w1')).toBe(false); // already running
    // The leader moves it (w1 looked dead): w1's late result does not count, w2's does.
    await store.assign(3n, 'm', [{ taskId: 'a', worker: 'w2', fromAttempt: 1 }]);
    expect(await store.finish('a', 1, 'w1')).toBe(false);
    expect(await store.start('a', 2, 'w2')).toBe(true);
    expect(await store.finish('a', 2, 'w2')).toBe(true);
    // A leader that planned from a read taken just before the finish reassigns it: it stays done.
    await store.assign(3n, 'm', [{ taskId: 'a', worker: 'w1', fromAttempt: 2 }]);
    expect(await store.start('a', 3, 'w1')).toBe(false);
    const state = await store.state();
    expect(state.tasks).toEqual([expect.objectContaining({ id: 'a', durationMs: 10, status: 'done' })]);
    expect(state.runs.map((r) => [r.worker, r.attempt, r.outcome])).toEqual([
      ['w1', 1, 'abandoned'],
      ['w2', 2, 'done'],
    ]);
    expect(violations(state, new Map())).toEqual([]);
  }, 60_000);

  test('fenced: a leader write with an older token is refused by Cassandra with both tokens, and nothing of it lands', async () => {
    const store = await connect(true);
    await store.submit([{ id: 'a', durationMs: 10 }]);
    await store.seal(5n, 'first');
    await store.seal(5n, 'first'); // the same leader again
    await store.seal(7n, 'new');
    const refused = await store.assign(5n, 'old', [{ taskId: 'a', worker: 'w-old', fromAttempt: 0 }]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StaleTokenError);
    expect(refused).toMatchObject({ token: 5n, highest: 7n });
    // The refusal is the fence's (Cassandra's answer to the conditional batch), not a check of ours.
    expect(refused).toMatchObject({ writerToken: 5n, storedToken: 7n });
    const state = await store.state();
    expect(state.tasks[0]).toMatchObject({ status: 'pending', attempt: 0 });
    expect(state.fencedWrites.map((w) => [w.op, w.token])).toEqual([
      ['seal', '5'],
      ['seal', '5'],
      ['seal', '7'],
    ]);
    // The task is simply not done here; of the fencing invariants, none is broken.
    expect(violations(state, new Map()).filter((v) => v.includes('write'))).toEqual([]);
  }, 60_000);

  test('control, the fence removed: a leader write with an older token is accepted', async () => {
    const store = await connect(false);
    await store.submit([{ id: 'a', durationMs: 10 }]);
    await store.seal(7n, 'new');
    await store.assign(5n, 'old', [{ taskId: 'a', worker: 'w-old', fromAttempt: 0 }]);
    const state = await store.state();
    expect(state.tasks[0]).toMatchObject({ worker: 'w-old', status: 'assigned' });
    expect(violations(state, new Map())).toContain('stale write accepted: assign by old with token 5 after 7');
  }, 60_000);
});
