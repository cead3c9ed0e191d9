import { encodeCell } from '../protocol/cells.js';
import type { Result } from '../protocol/result.js';
import { canonicalAddress } from './address.js';
import { selfAddress, type RowContext } from './system-rows.js';

/**
 * Server-side `DESCRIBE CLUSTER` (Cassandra 4.0+) answers cluster name, partitioner and snitch,
 * and, when the connection has a user keyspace, `range_ownership`: every token range of the real
 * ring with the real nodes that own it. The proxy forwards the statement (so the columns, their
 * types and the other cells are the server's own) and replaces that map with the virtual ring:
 * each virtual token with the instance that owns it, written as Cassandra writes an endpoint
 * (`/address:port`, here the instance's native port). Replicas are not listed: every instance can
 * coordinate every request, so the owner is all a client can use.
 */
export function virtualRangeOwnership(ctx: RowContext): Map<string, string[]> {
  const owners: { token: bigint; endpoint: string }[] = [];
  const self = ctx.view.self;
  const selfAt = selfAddress(ctx);
  const listed = [
    ...(selfAt === null ? [] : [{ member: self, address: selfAt }]),
    ...ctx.view.peers.map((m) => ({ member: m, address: canonicalAddress(m.address) })),
  ];
  for (const { member, address } of listed) {
    for (const token of member.tokens) owners.push({ token: BigInt(token), endpoint: `/${address}:${member.nativePort}` });
  }
  owners.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
  return new Map(owners.map((o) => [o.token.toString(), [o.endpoint]]));
}

/** The backend's DESCRIBE CLUSTER answer with its range_ownership (if any) replaced by the virtual ring. */
export function rewriteDescribeCluster(result: Result, ctx: RowContext): Result {
  if (result.kind !== 'Rows') return result;
  const columns = result.metadata.columns ?? [];
  const index = columns.findIndex((c) => c.name === 'range_ownership');
  if (index < 0) return result;
  const type = columns[index]!.type;
  const ownership = encodeCell(type, virtualRangeOwnership(ctx));
  return { ...result, rows: result.rows.map((row) => row.map((cell, i) => (i === index ? ownership : cell))) };
}
