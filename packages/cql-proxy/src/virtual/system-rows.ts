import type { CellValue } from '../protocol/cells.js';
import { DataTypeId } from '../protocol/types.js';
import { canonicalAddress, isAdvertisable } from './address.js';
import type { VirtualMember } from './membership.js';
import type { TableSchema } from './system-tables.js';
import type { VirtualView } from './view.js';

/**
 * The rows of the virtual tables: system.local describes the instance that received the query,
 * system.peers every other listed member. What describes the software (versions, cluster name,
 * schema_version, DSE's workload columns) comes from the backend's real system.local, so drivers'
 * version checks and schema agreement see the truth; what describes a node (addresses, ports,
 * host id, tokens, placement) comes from the member, never from the backend node, whose
 * addresses must not leak.
 */

/** The backend's own system.local row, by column name; refreshed by the proxy on SCHEMA_CHANGE. */
export type BackendLocalRow = Readonly<Record<string, CellValue>>;

export interface RowContext {
  readonly view: VirtualView;
  readonly backendLocal: BackendLocalRow;
  /** The accepted socket's local address: system.local's address when self has no advertised one. */
  readonly localAddress?: string;
  /** This process's start, in seconds since the epoch, as Cassandra's gossip generation is. */
  readonly gossipGeneration?: number;
}

export type Row = ReadonlyMap<string, CellValue>;

export const PARTITIONER = 'org.apache.cassandra.dht.Murmur3Partitioner';

/** Node-specific backend columns we cannot fill truthfully: left null rather than copied from the backend node. */
const NODE_SPECIFIC = new Set(['truncated_at', 'preferred_ip', 'preferred_port', 'storage_port', 'storage_port_ssl', 'jmx_port']);

export function selfAddress(ctx: RowContext): string | null {
  const self = ctx.view.self;
  if (self.advertisable) return canonicalAddress(self.address);
  return isAdvertisable(ctx.localAddress) ? canonicalAddress(ctx.localAddress) : null;
}

/** Cells shared by local and peers rows that come from the member. */
function memberCells(m: VirtualMember, address: string | null, ctx: RowContext): Record<string, CellValue> {
  return {
    data_center: m.dc,
    rack: m.rack,
    host_id: m.hostId,
    tokens: [...m.tokens],
    release_version: m.releaseVersion ?? ctx.backendLocal['release_version'] ?? null,
    schema_version: ctx.backendLocal['schema_version'] ?? null,
    rpc_address: address,
    native_address: address,
    native_port: m.nativePort,
    // DSE's names for the native endpoint; the Java driver reads them from DSE peers.
    native_transport_address: address,
    native_transport_port: m.nativePort,
    native_transport_port_ssl: m.nativePort,
  };
}

/**
 * A row in the schema's columns. A column we know is ours; any other one (a DSE extra, a newer
 * server's addition) is copied from the backend's system.local unless it is an address or
 * node-specific, since a copied address would be the backend node's.
 */
function rowOf(schema: TableSchema, own: Record<string, CellValue>, ctx: RowContext): Row {
  const row = new Map<string, CellValue>();
  for (const c of schema.columns) {
    if (Object.hasOwn(own, c.name)) row.set(c.name, own[c.name] ?? null);
    else if (NODE_SPECIFIC.has(c.name) || c.type.id === DataTypeId.INET) row.set(c.name, null);
    else row.set(c.name, ctx.backendLocal[c.name] ?? null);
  }
  return row;
}

export function localRow(schema: TableSchema, ctx: RowContext): Row {
  const self = ctx.view.self;
  const address = selfAddress(ctx);
  return rowOf(
    schema,
    {
      ...memberCells(self, address, ctx),
      key: 'local',
      bootstrapped: 'COMPLETED',
      broadcast_address: address,
      listen_address: address,
      // One port stands for the node everywhere: peers list it as peer_port, and the Java driver
      // matches broadcast_port against it when it refreshes a node.
      broadcast_port: self.nativePort,
      listen_port: self.nativePort,
      rpc_port: self.nativePort,
      partitioner: PARTITIONER,
      gossip_generation: ctx.gossipGeneration ?? null,
    },
    ctx,
  );
}

/** One row per listed peer, in ring order. */
export function peerRows(schema: TableSchema, ctx: RowContext): Row[] {
  return ctx.view.peers.map((m) => {
    const address = canonicalAddress(m.address);
    return rowOf(schema, { ...memberCells(m, address, ctx), peer: address, peer_port: m.nativePort }, ctx);
  });
}
