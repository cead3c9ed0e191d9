// The fenced-write scenarios, written once and run directly against the testenv Cassandra and
// through a Muster CQL proxy in front of it. Each scenario takes a `Writer`: the fence, or (the
// control) plain batches of the same statements, which must let the stale write through.
import type { Lease } from '@muster/core';
import cassandra, { type Client, type ClientOptions } from 'cassandra-driver';
import { CassandraFence, type FencedStatement } from '@muster/fence-cassandra';
import { startTcpProxy } from '../../../scripts/testenv/tcp-proxy.mjs';

export type FenceLease = Pick<Lease, 'name' | 'token'>;

/** Writes `value` as the state of task `id` in partition `scheduler`, under `lease`. */
export type Writer = (lease: FenceLease, scheduler: string, id: string, value: string) => Promise<void>;

export const keyspace = 'muster_fence_test';

export async function createKeyspace(client: Client): Promise<void> {
  await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
}

/** A connected client with the test keyspace in place (slow DDL on a loaded machine: long reads). */
export async function connectTaskClient(options: ClientOptions): Promise<Client> {
  const client = new cassandra.Client({ socketOptions: { readTimeout: 90_000 }, ...options });
  await client.connect();
  await createKeyspace(client);
  return client;
}

/** A TCP relay in front of `contactPoint` (host:port), so a test can hold or cut what passes. */
export function relayTo(contactPoint: string): ReturnType<typeof startTcpProxy> {
  const [host, port] = contactPoint.split(':');
  return startTcpProxy({ target: { host: host!, port: Number(port ?? 9042) } });
}

/** Drops what the run created and shuts the client down. */
export async function closeTaskClient(client: Client | undefined): Promise<void> {
  if (client) await dropTaskTables(client);
  await client?.shutdown();
}

const created: string[] = [];
/** A fresh task table (one per scenario, so runs and scenarios never share a fence). */
export async function createTaskTable(client: Client): Promise<string> {
  const table = `tasks_${process.pid}_${Date.now().toString(36)}_${created.length}`;
  await client.execute(`CREATE TABLE ${keyspace}.${table} (scheduler text, id text, state text, PRIMARY KEY (scheduler, id))`);
  created.push(table);
  return table;
}

/** Drops the tables this process created (the shared server keeps nothing of a run). */
export async function dropTaskTables(client: Client): Promise<void> {
  for (const table of created.splice(0)) {
    await client.execute(`DROP TABLE IF EXISTS ${keyspace}.${table}`);
    await client.execute(`DROP TABLE IF EXISTS ${keyspace}.${table}_flat`);
  }
}

function update(table: string, scheduler: string, id: string, value: string): FencedStatement {
  return { query: `UPDATE ${keyspace}.${table} SET state = ? WHERE scheduler = ? AND id = ?`, params: [value, scheduler, id] };
}

export async function fencedWriter(client: Client, table: string): Promise<{ fence: CassandraFence; write: Writer }> {
  const fence = new CassandraFence(client, { keyspace, table, partitionKey: ['scheduler'] });
  await fence.ensureSchema();
  return { fence, write: (lease, scheduler, id, value) => fence.write(lease, [scheduler], [update(table, scheduler, id, value)]) };
}

/** The control: the same statements as a plain batch, no fence. */
export function plainWriter(client: Client, table: string): Writer {
  return async (_lease, scheduler, id, value) => {
    await client.batch([update(table, scheduler, id, value) as { query: string; params: unknown[] }], { prepare: true });
  };
}

export async function readState(client: Client, table: string, scheduler: string, id: string): Promise<string | undefined> {
  const { rows } = await client.execute(`SELECT state FROM ${keyspace}.${table} WHERE scheduler = ? AND id = ?`, [scheduler, id], {
    prepare: true,
    consistency: 0x0008, // SERIAL: what the last Paxos round left, whatever replica answers
  });
  return (rows[0]?.['state'] as string | null | undefined) ?? undefined;
}

/**
 * Holder A (token t1) writes, then B (t2 > t1) writes, then A writes again. Returns the error of
 * A's last write (undefined when it was accepted) and the state left in the table.
 */
export async function staleHolderScenario(
  client: Client,
  table: string,
  write: Writer,
  a: FenceLease,
  b: FenceLease,
): Promise<{ error: unknown; state: string | undefined }> {
  await write(a, 's1', 'task-1', 'a-first');
  await write(b, 's1', 'task-1', 'b');
  const error = await write(a, 's1', 'task-1', 'a-stale').then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, state: await readState(client, table, 's1', 'task-1') };
}
