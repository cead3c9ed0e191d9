// What the fence reports when the driver fails (no server: a client double answers the batch).
// A WriteTimeout of writeType CAS cannot be provoked on demand on a healthy node, so its mapping is
// checked here, against the error shape the driver builds (code 0x1100, writeType 'CAS').
import { describe, expect, it } from '@jest/globals';
import type { Client } from 'cassandra-driver';
import { InvalidArgumentError, MusterError } from '@muster/core';
import { CassandraFence, FenceOutcomeUnknownError } from '@muster/fence-cassandra';

function clientFailingWith(error: unknown): { client: Client; batches: unknown[] } {
  const batches: unknown[] = [];
  const client = {
    batch: async (queries: unknown, options: unknown) => {
      batches.push({ queries, options });
      throw error;
    },
  } as unknown as Client;
  return { client, batches };
}

const options = { keyspace: 'ks', table: 'tasks', partitionKey: ['scheduler'] };
const lease = { name: 'master', token: 42n };

describe('CassandraFence error reporting', () => {
  it('a WriteTimeout of writeType CAS is FenceOutcomeUnknownError (MUSTER_TIMEOUT) with the driver error as cause, never retried', async () => {
    const driverError = Object.assign(new Error('Server timeout during write query at consistency SERIAL'), {
      code: 0x1100,
      writeType: 'CAS',
    });
    const { client, batches } = clientFailingWith(driverError);
    const error = await new CassandraFence(client, options).write(lease, ['s1'], []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FenceOutcomeUnknownError);
    expect(MusterError.is(error, 'MUSTER_TIMEOUT')).toBe(true);
    expect((error as FenceOutcomeUnknownError).cause).toBe(driverError);
    expect((error as FenceOutcomeUnknownError).writerToken).toBe(42n);
    expect((error as Error).message).toMatch(/may or may not have been applied.*SERIAL consistency/);
    expect(batches).toHaveLength(1);
  });

  it('so are CAS_WRITE_UNKNOWN and the driver’s own read timeout', async () => {
    for (const driverError of [
      Object.assign(new Error('cas write unknown'), { code: 0x1700 }),
      Object.assign(new Error('The host 127.0.0.1:9042 did not reply before timeout 12000 ms'), { name: 'OperationTimedOutError' }),
    ]) {
      const error = await new CassandraFence(clientFailingWith(driverError).client, options)
        .write(lease, ['s1'], [])
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(FenceOutcomeUnknownError);
    }
  });

  it('a WriteTimeout of another write type is passed through as the driver reported it', async () => {
    const driverError = Object.assign(new Error('batch log timeout'), { code: 0x1100, writeType: 'BATCH_LOG' });
    const error = await new CassandraFence(clientFailingWith(driverError).client, options)
      .write(lease, ['s1'], [])
      .catch((e: unknown) => e);
    expect(error).toBe(driverError);
  });

  it('sends the condition at SERIAL and the commit at QUORUM unless told otherwise', async () => {
    const { client, batches } = clientFailingWith(new Error('x'));
    await new CassandraFence(client, options).write(lease, ['s1'], []).catch(() => undefined);
    await new CassandraFence(client, { ...options, consistency: 0x0006, serialConsistency: 0x0009 })
      .write(lease, ['s1'], [])
      .catch(() => undefined);
    expect(batches.map((b) => (b as { options: object }).options)).toEqual([
      { prepare: true, consistency: 0x0004, serialConsistency: 0x0008 },
      { prepare: true, consistency: 0x0006, serialConsistency: 0x0009 },
    ]);
  });

  it('refuses partition key values that do not match partitionKey, and an empty partitionKey', () => {
    const fence = new CassandraFence(clientFailingWith(new Error('x')).client, options);
    return Promise.all([
      expect(fence.write(lease, ['a', 'b'], [])).rejects.toThrow(
        /2 partition key values for ks.tasks, whose partition key is \(scheduler\)/,
      ),
      expect(() => new CassandraFence({} as Client, { ...options, partitionKey: [] })).toThrow(InvalidArgumentError),
    ]);
  });
});
