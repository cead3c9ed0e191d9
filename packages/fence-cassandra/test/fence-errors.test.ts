// What the fence reports when the driver fails (no server: a client double answers the batch).
// A WriteTimeout of writeType CAS cannot be provoked on demand on a healthy node, so its mapping is
// checked here, against the error shape the driver builds (code 0x1100, writeType 'CAS').
import { describe, expect, it } from '@jest/globals';
import cassandra, { type Client } from 'cassandra-driver';
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

  // The driver's own error classes, built as it builds them (a socket error carries isSocketError, and
  // requestNotWritten only while the request was still in its write queue: connection.js, writers.js).
  const { NoHostAvailableError, OperationTimedOutError, ResponseError } = cassandra.errors;
  const DriverError = cassandra.errors.DriverError as unknown as new (message: string) => Error; // abstract in its typings only
  const socketError = (written: boolean) =>
    Object.assign(new DriverError('Socket was closed'), { isSocketError: true, ...(written ? {} : { requestNotWritten: true }) });
  const timedOut = () => new OperationTimedOutError('The host 127.0.0.2:9042 did not reply before timeout 3 ms', '127.0.0.2:9042');
  const failWith = (driverError: unknown) =>
    new CassandraFence(clientFailingWith(driverError).client, options).write(lease, ['s1'], []).catch((e: unknown) => e);

  it('a connection lost after the batch was written, a WriteFailure of writeType CAS, and a NoHostAvailableError with such an attempt are FenceOutcomeUnknownError', async () => {
    const writeFailure = Object.assign(new ResponseError(0x1500, 'Server failure during write query at consistency SERIAL'), {
      writeType: 'CAS',
    });
    const driverErrors = [
      socketError(true),
      writeFailure,
      new NoHostAvailableError({ '127.0.0.1:9042': socketError(false), '127.0.0.2:9042': timedOut() }),
    ];
    const errors = await Promise.all(driverErrors.map(failWith));
    expect(errors.map((e) => e instanceof FenceOutcomeUnknownError)).toEqual([true, true, true]);
    expect(errors.map((e) => (e as Error).cause)).toEqual(driverErrors);
  });

  it('a socket error before the batch was written, and a NoHostAvailableError with only such attempts, are passed through (nothing was sent)', async () => {
    for (const driverError of [
      socketError(false),
      new NoHostAvailableError({
        '127.0.0.1:9042': socketError(false),
        '127.0.0.2:9042': new ResponseError(0x1000, 'Cannot achieve consistency level QUORUM'),
      }),
      new NoHostAvailableError({}),
    ]) {
      expect(await failWith(driverError)).toBe(driverError);
    }
  });

  it('a token above the CQL bigint range (core issues up to 30 digits) is an InvalidArgumentError naming the limit, before anything is sent', async () => {
    const { client, batches } = clientFailingWith(new Error('x'));
    const error = await new CassandraFence(client, options)
      .write({ name: 'master', token: 123456789012345678901234567890n }, ['s1'], [])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(MusterError.is(error, 'MUSTER_INVALID_ARGUMENT')).toBe(true);
    expect((error as Error).message).toMatch(
      /token 123456789012345678901234567890 does not fit .*CQL bigint \(at most 9223372036854775807\)/,
    );
    expect(batches).toHaveLength(0);
    await expect(new CassandraFence(client, options).write({ name: 'master', token: 2n ** 63n - 1n }, ['s1'], [])).rejects.toThrow('x');
  });

  it('a WriteTimeout or WriteFailure of writeType SIMPLE (Paxos v1 commits with it: the proposal was accepted) is FenceOutcomeUnknownError too', async () => {
    const driverErrors = [0x1100, 0x1500].map((code) =>
      Object.assign(new ResponseError(code, 'Server timeout during write query at consistency QUORUM'), { writeType: 'SIMPLE' }),
    );
    const errors = await Promise.all(driverErrors.map(failWith));
    expect(errors.map((e) => e instanceof FenceOutcomeUnknownError)).toEqual([true, true]);
  });

  it('errors that mean Cassandra applied nothing (Unavailable, a read timeout of the Paxos read, IsBootstrapping) are passed through as the driver reported them', async () => {
    for (const code of [0x1000, 0x1200, 0x1002]) {
      const driverError = new ResponseError(code, `server error ${code}`);
      expect(await failWith(driverError)).toBe(driverError);
    }
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
