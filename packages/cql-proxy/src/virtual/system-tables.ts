import type { ColumnSpec } from '../protocol/result.js';
import { types, type DataType } from '../protocol/types.js';
import type { SystemTableName } from './system-query.js';

/**
 * The shape of the three virtual tables. By default, Cassandra 5.0's (SystemKeyspace: `local`,
 * the legacy `peers`, `peers_v2`); when the proxy has read the backend's own table metadata (the
 * rows metadata of a `SELECT *` at start), that wins, so `SELECT *` returns exactly the columns and
 * types of the real server — DSE's extra columns included, a 3.x backend's missing ones left out.
 */

export interface TableSchema {
  readonly table: SystemTableName;
  /** In `SELECT *` order: partition key, clustering columns, then the rest by name, as Cassandra orders them. */
  readonly columns: readonly ColumnSpec[];
  readonly partitionKey: readonly string[];
  readonly clustering: readonly string[];
}

/** `peers_v2` is absent when the backend has no such table, or when it is switched off: it then answers "unconfigured table". */
export interface SystemSchemas {
  readonly local: TableSchema;
  readonly peers: TableSchema;
  readonly peers_v2?: TableSchema;
}

const tokens = types.set(types.varchar);
const cassandra5: Record<SystemTableName, readonly [string, DataType][]> = {
  local: [
    ['key', types.varchar],
    ['bootstrapped', types.varchar],
    ['broadcast_address', types.inet],
    ['broadcast_port', types.int],
    ['cluster_name', types.varchar],
    ['cql_version', types.varchar],
    ['data_center', types.varchar],
    ['gossip_generation', types.int],
    ['host_id', types.uuid],
    ['listen_address', types.inet],
    ['listen_port', types.int],
    ['native_protocol_version', types.varchar],
    ['partitioner', types.varchar],
    ['rack', types.varchar],
    ['release_version', types.varchar],
    ['rpc_address', types.inet],
    ['rpc_port', types.int],
    ['schema_version', types.uuid],
    ['tokens', tokens],
    ['truncated_at', types.map(types.uuid, types.blob)],
  ],
  peers: [
    ['peer', types.inet],
    ['data_center', types.varchar],
    ['host_id', types.uuid],
    ['preferred_ip', types.inet],
    ['rack', types.varchar],
    ['release_version', types.varchar],
    ['rpc_address', types.inet],
    ['schema_version', types.uuid],
    ['tokens', tokens],
  ],
  peers_v2: [
    ['peer', types.inet],
    ['peer_port', types.int],
    ['data_center', types.varchar],
    ['host_id', types.uuid],
    ['native_address', types.inet],
    ['native_port', types.int],
    ['preferred_ip', types.inet],
    ['preferred_port', types.int],
    ['rack', types.varchar],
    ['release_version', types.varchar],
    ['schema_version', types.uuid],
    ['tokens', tokens],
  ],
};

const keys: Record<SystemTableName, { partitionKey: string[]; clustering: string[] }> = {
  local: { partitionKey: ['key'], clustering: [] },
  peers: { partitionKey: ['peer'], clustering: [] },
  peers_v2: { partitionKey: ['peer'], clustering: ['peer_port'] },
};

const spec = (table: SystemTableName, name: string, type: DataType): ColumnSpec => ({ keyspace: 'system', table, name, type });

/** One table's schema: the backend's columns when given (keyspace and table names are ours), else Cassandra 5.0's. */
export function tableSchema(table: SystemTableName, backendColumns?: readonly Pick<ColumnSpec, 'name' | 'type'>[]): TableSchema {
  const columns = backendColumns?.length
    ? backendColumns.map((c) => spec(table, c.name, c.type))
    : cassandra5[table].map(([name, type]) => spec(table, name, type));
  return { table, columns, ...keys[table] };
}

export interface SchemaSources {
  readonly local?: readonly Pick<ColumnSpec, 'name' | 'type'>[];
  readonly peers?: readonly Pick<ColumnSpec, 'name' | 'type'>[];
  /** `null`: the backend has no peers_v2 (Cassandra 3.x). */
  readonly peers_v2?: readonly Pick<ColumnSpec, 'name' | 'type'>[] | null;
  /** Answer "unconfigured table" for peers_v2 whatever the backend has (default true: serve it). */
  readonly servePeersV2?: boolean;
}

export function systemSchemas(sources: SchemaSources = {}): SystemSchemas {
  const v2 = sources.servePeersV2 !== false && sources.peers_v2 !== null;
  return {
    local: tableSchema('local', sources.local),
    peers: tableSchema('peers', sources.peers),
    ...(v2 ? { peers_v2: tableSchema('peers_v2', sources.peers_v2 ?? undefined) } : {}),
  };
}

export function schemaOf(schemas: SystemSchemas, table: SystemTableName): TableSchema | undefined {
  return table === 'peers_v2' ? schemas.peers_v2 : schemas[table];
}
