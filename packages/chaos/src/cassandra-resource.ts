import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, MusterError } from '@muster/core';
import type { FencedResourcePort } from './fenced-resource.js';

interface CassandraServer {
  readonly contactPoints: string[];
  readonly localDataCenter: string;
}

const keyspace = 'muster_chaos';
const SERIAL = 0x0008;

/**
 * The fenced resource as Cassandra itself (`--resource cassandra`): every protected write is a
 * `@muster/fence-cassandra` write (an LWT batch on a fence column) to one partition of a table of
 * the testenv Cassandra, and Cassandra decides. Writes are sent one at a time, so the order
 * Cassandra applied them is the order the history records. A write whose outcome is unknown (an
 * LWT timeout) is read back at SERIAL: accepted if the partition's last write is this one, else
 * sent again; only Cassandra's refusal (StaleTokenError) is recorded as refused.
 */
export async function cassandraResource(lockName: string, seed: number, server = 'cassandra'): Promise<FencedResourcePort> {
  const entry = testenvServer(server);
  // Loaded only for this resource: the driver and the fence package are optional for the checker.
  const [{ default: cassandra }, { CassandraFence, StaleTokenError }] = await Promise.all([
    import('cassandra-driver'),
    import('@muster/fence-cassandra'),
  ]);
  const client = new cassandra.Client({
    contactPoints: entry.contactPoints,
    localDataCenter: entry.localDataCenter,
    socketOptions: { readTimeout: 60_000 },
  });
  await client.connect();
  const table = `run_${seed}_${Date.now().toString(36)}`;
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await client.execute(`CREATE TABLE ${keyspace}.${table} (lock text, item text, last_write text, writes int, PRIMARY KEY (lock, item))`);
  const fence = new CassandraFence(client, { keyspace, table, partitionKey: ['lock'] });
  await fence.ensureSchema();
  const update = `UPDATE ${keyspace}.${table} SET last_write = ? WHERE lock = ? AND item = 'state'`;
  const lastWrite = async (): Promise<string | undefined> => {
    const { rows } = await client.execute(`SELECT last_write FROM ${keyspace}.${table} WHERE lock = ? AND item = 'state'`, [lockName], {
      prepare: true,
      consistency: SERIAL,
    });
    return (rows[0]?.['last_write'] as string | null | undefined) ?? undefined;
  };
  let accepted = 0;
  let refused = 0;
  let unknown = 0;
  let lastAccepted: string | undefined;
  let queue: Promise<unknown> = Promise.resolve();

  const judge = async (token: bigint, id: string): Promise<boolean> => {
    for (let attempt = 1; ; attempt++) {
      try {
        await fence.write({ name: lockName, token }, [lockName], [{ query: update, params: [id, lockName] }]);
        return true;
      } catch (error) {
        if (error instanceof StaleTokenError) return false;
        // Outcome unknown (an LWT timeout under load) or the driver failed: a serial read settles
        // what Cassandra did. Not applied is not refused: send it again, as the fence's README
        // tells callers (an equal token is accepted, and Cassandra still refuses it if a newer
        // token wrote meanwhile).
        unknown++;
        if ((await settle(id)) === id) return true;
        if (attempt >= 5) {
          throw new MusterError(
            'MUSTER_BACKEND',
            `chaos --resource cassandra: write ${id} failed ${attempt} times; last: ${(error as Error).message}`,
            {
              cause: error,
            },
          );
        }
      }
    }
  };
  const settle = async (id: string): Promise<string | undefined> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await lastWrite();
      } catch (readError) {
        if (attempt >= 5)
          throw new MusterError('MUSTER_BACKEND', `chaos --resource cassandra: cannot tell whether write ${id} was applied`, {
            cause: readError,
          });
      }
    }
  };

  return {
    write(token, _who, id) {
      const result = queue.then(() => judge(token, id));
      queue = result.catch(() => undefined);
      return result.then((ok) => {
        if (ok) {
          accepted++;
          lastAccepted = id;
        } else refused++;
        return ok;
      });
    },
    async close() {
      await queue;
      try {
        const stored = await lastWrite();
        const token = await fence.readToken([lockName]);
        return (
          `cassandra resource ${keyspace}.${table}: ${accepted} writes applied, ${refused} refused by Cassandra, ${unknown} timed out and were settled by a serial read (then applied or sent again); ` +
          `fence ${token ?? 'none'}, last write ${stored ?? 'none'} ${stored === lastAccepted ? '(the last accepted one, as recorded)' : `(MISMATCH: the history's last accepted write is ${lastAccepted})`}`
        );
      } finally {
        await client.execute(`DROP TABLE IF EXISTS ${keyspace}.${table}`).catch(() => undefined);
        await client.shutdown();
      }
    },
  };
}

function testenvServer(name: string): CassandraServer {
  const dir = process.env.MUSTER_TESTENV_DIR ?? join(process.cwd(), '.testenv');
  const file = join(dir, 'state.json');
  let entry: CassandraServer | undefined;
  try {
    entry = (JSON.parse(readFileSync(file, 'utf8')) as Record<string, CassandraServer>)[name];
  } catch (cause) {
    throw new InvalidArgumentError(
      `--resource cassandra: cannot read ${file} (${(cause as Error).message}); start it with npm run testenv -- up ${name}`,
    );
  }
  if (!entry)
    throw new InvalidArgumentError(`--resource cassandra: ${file} has no '${name}' server; start it with npm run testenv -- up ${name}`);
  return entry;
}
