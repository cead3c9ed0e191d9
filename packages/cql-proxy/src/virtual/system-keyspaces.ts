import { SYSTEM_TABLES, type SystemTableName } from './system-query.js';

/**
 * What the proxy does with a read of each table of Cassandra 5.0's system keyspaces (issue 12, 3):
 * a client must see the virtual cluster, never a backend node's address, host id or token.
 *
 * - `virtual`: answered by the proxy from the virtual cluster (system.local, peers, peers_v2).
 * - `pass`: forwarded; the table describes schema, roles or local activity, never the ring.
 * - `refuse`: INVALID with the reason; the table names backend nodes (addresses, host ids) or
 *   their token ranges, and a per-client rewrite would be a second, partial virtual cluster.
 *
 * A table not listed here follows its keyspace's default: `pass` for the keyspaces that can only
 * hold definitions (system_schema, system_auth, system_virtual_schema), `refuse` for the others,
 * so a table a newer Cassandra adds to system or system_views is refused until someone looks at it.
 * packages/cql-proxy/docs/system-tables.md lists the same decisions for users; a test walks every
 * table of a real backend and checks that none of them lets a backend node through.
 */
export type TablePolicy = { readonly kind: 'virtual' } | { readonly kind: 'pass' } | { readonly kind: 'refuse'; readonly reason: string };

export const SYSTEM_KEYSPACES = [
  'system',
  'system_views',
  'system_schema',
  'system_distributed',
  'system_traces',
  'system_auth',
  'system_virtual_schema',
] as const;

const NODES = 'it names the backend nodes';
const RANGES = "it holds the backend's token ranges";
const CONFIG = "it shows the backend node's configuration, addresses included";
const QUERIES =
  'it lists the statements the backend node is running for every client (directly or through any proxy), whose texts ' +
  "may name backend nodes (a direct client's WHERE peer = '10.0.0.2')";
const PREPARED =
  'it holds the texts of the statements every client of that backend node prepared (directly or through any proxy), ' +
  "which may name backend nodes (a direct client's WHERE peer = '10.0.0.2')";

/** Refused tables and why; every other table of a keyspace with a `pass` default passes. */
const refused: Record<string, Record<string, string>> = {
  system: {
    available_ranges: RANGES,
    available_ranges_v2: RANGES,
    paxos_repair_history: RANGES,
    peer_events: NODES,
    peer_events_v2: NODES,
    prepared_statements: PREPARED,
    repairs: NODES,
    size_estimates: RANGES,
    table_estimates: RANGES,
    transferred_ranges: NODES,
    transferred_ranges_v2: NODES,
    view_builds_in_progress: RANGES,
  },
  system_views: {
    clients: 'it lists the connections the backend node sees, which are the proxies, not this client',
    queries: QUERIES,
    gossip_info: NODES,
    internode_inbound: NODES,
    internode_outbound: NODES,
    pending_hints: NODES,
    repair_jobs: NODES,
    repair_participates: NODES,
    repair_sessions: NODES,
    repair_validations: NODES,
    repairs: NODES,
    settings: CONFIG,
    streaming: NODES,
    system_logs: "it shows the backend node's log, which names nodes",
    system_properties: CONFIG,
  },
  system_distributed: {
    parent_repair_history: RANGES,
    repair_history: NODES,
    view_build_status: NODES,
  },
  system_traces: {
    events: 'trace events name the backend node that recorded them',
    sessions: 'trace sessions name the coordinating backend node',
  },
};

/** Tables checked to carry no topology, in keyspaces that refuse what is not listed. */
const passed: Record<string, readonly string[]> = {
  system: [
    'IndexInfo',
    'batches',
    'built_views',
    'compaction_history',
    'paxos',
    'sstable_activity',
    'sstable_activity_v2',
    'top_partitions',
  ],
  system_views: [
    'batch_metrics',
    'caches',
    'cidr_filtering_metrics_counts',
    'cidr_filtering_metrics_latencies',
    'coordinator_read_latency',
    'coordinator_scan_latency',
    'coordinator_write_latency',
    'cql_metrics',
    'credentials_cache_keys',
    'disk_usage',
    'jmx_permissions_cache_keys',
    'local_read_latency',
    'local_scan_latency',
    'local_write_latency',
    'max_partition_size',
    'max_sstable_duration',
    'max_sstable_size',
    'network_permissions_cache_keys',
    'permissions_cache_keys',
    'roles_cache_keys',
    'rows_per_read',
    'sai_column_indexes',
    'sai_sstable_index_segments',
    'sai_sstable_indexes',
    'snapshots',
    'sstable_tasks',
    'thread_pools',
    'tombstones_per_read',
  ],
  system_distributed: ['partition_denylist'],
  system_traces: [],
};

const PASS_BY_DEFAULT = new Set<string>(['system_schema', 'system_auth', 'system_virtual_schema']);

export function isSystemKeyspace(keyspace: string): boolean {
  return (SYSTEM_KEYSPACES as readonly string[]).includes(keyspace);
}

/** The policy for a read of `keyspace.table` (names as the server spells them). */
export function tablePolicy(keyspace: string, table: string): TablePolicy {
  if (!isSystemKeyspace(keyspace)) return { kind: 'pass' };
  if (keyspace === 'system' && (SYSTEM_TABLES as readonly string[]).includes(table)) return { kind: 'virtual' };
  const reason = refused[keyspace]?.[table];
  if (reason !== undefined) return { kind: 'refuse', reason };
  if (PASS_BY_DEFAULT.has(keyspace) || passed[keyspace]?.includes(table)) return { kind: 'pass' };
  return { kind: 'refuse', reason: 'the proxy has not been taught whether it carries the real topology' };
}

/** The INVALID message a refused read is answered with. */
export function refusalMessage(keyspace: string, table: string, reason: string): string {
  return (
    `${keyspace}.${table} is not served through the proxy: ${reason}, and clients of the proxy see the proxy ` +
    'instances as the cluster. Read it on the backend nodes directly (cqlsh to a node), or see ' +
    'the system tables list in the cql-proxy README'
  );
}

/**
 * The INVALID message a write to a table the proxy does not pass is answered with: a conditional
 * write answers with the row it found (the real host id of `system.local`), and any write there
 * would change the backend's own view of its cluster.
 */
export function writeRefusalMessage(keyspace: string, table: string, policy: TablePolicy): string {
  const why =
    policy.kind === 'refuse'
      ? policy.reason
      : "the proxy answers it from its membership, and the backend node's own table is not the clients' to change";
  return (
    `${keyspace}.${table} cannot be written through the proxy: ${why}. Write to the backend nodes directly ` +
    '(cqlsh to a node) if you mean to change them, or see the system tables list in the cql-proxy README'
  );
}

/** Every table with a decision of its own, for the documentation test. */
export function listedTables(): { keyspace: string; table: string; policy: TablePolicy }[] {
  const out: { keyspace: string; table: string; policy: TablePolicy }[] = [];
  for (const table of SYSTEM_TABLES as readonly SystemTableName[]) out.push({ keyspace: 'system', table, policy: { kind: 'virtual' } });
  for (const [keyspace, tables] of Object.entries(passed))
    for (const table of tables) out.push({ keyspace, table, policy: { kind: 'pass' } });
  for (const [keyspace, tables] of Object.entries(refused))
    for (const [table, reason] of Object.entries(tables)) out.push({ keyspace, table, policy: { kind: 'refuse', reason } });
  return out;
}
