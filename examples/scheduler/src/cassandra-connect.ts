import cassandra from 'cassandra-driver';
import type { Infer } from '@muster/core/adapter';
import { CassandraFence } from '@muster/fence-cassandra';
import type { cassandraTableSchema } from './config.js';
import { createTaskTable } from './cassandra-schema.js';
import { CassandraTaskStore } from './cassandra-store.js';

export type CassandraTableSettings = Infer<typeof cassandraTableSchema>;

export interface CassandraConnection {
  readonly client: cassandra.Client;
  readonly store: CassandraTaskStore;
  /** Creates the keyspace, the table and the fence's column: once, by one process (`muster-scheduler schema`). */
  createSchema(options?: { replicationFactor?: number }): Promise<void>;
  close(): Promise<void>;
}

/** A driver client and the task store on it for the scheduler `scheduler` (its master lock's name). */
export async function connectCassandra(
  settings: CassandraTableSettings,
  scheduler: string,
  options: { beforeLeaderWrite?: ((op: 'seal' | 'assign') => void) | undefined } = {},
): Promise<CassandraConnection> {
  // The driver dials every peer it learns from system.peers on one port, the configured one (a
  // Muster proxy cluster listens on one port on several addresses): take it from the contact points.
  const ports = new Set(settings.contactPoints.map((p) => /:(\d+)$/.exec(p)?.[1]).filter((p) => p !== undefined));
  const port = ports.size === 1 ? Number([...ports][0]) : undefined;
  const client = new cassandra.Client({
    contactPoints: settings.contactPoints,
    localDataCenter: settings.localDataCenter,
    ...(port ? { protocolOptions: { port } } : {}),
    ...(settings.username ? { credentials: { username: settings.username, password: settings.password ?? '' } } : {}),
  });
  await client.connect();
  try {
    // The fence is a static column of the scheduler's partition: every leader write is ordered by it.
    const fence = settings.fence
      ? new CassandraFence(client, { keyspace: settings.keyspace, table: settings.table, partitionKey: ['scheduler'] })
      : undefined;
    const store = new CassandraTaskStore({
      client,
      keyspace: settings.keyspace,
      table: settings.table,
      scheduler,
      fence,
      beforeLeaderWrite: options.beforeLeaderWrite,
    });
    return {
      client,
      store,
      async createSchema(schemaOptions) {
        await createTaskTable(client, settings, schemaOptions);
        await fence?.ensureSchema?.();
      },
      close: () => client.shutdown(),
    };
  } catch (error) {
    await client.shutdown();
    throw error;
  }
}
