import { decodeResult } from '../protocol/result.js';

/** Where a prepared statement's partition key is bound: its keyspace and the key's marker indexes, in key order. */
export interface PartitionKeyMarkers {
  readonly keyspace: string;
  readonly indexes: readonly number[];
}

/**
 * Reads a RESULT Prepared message for the partition key markers. Only v4 and later carry them
 * (pk_count and pk_index); v3, a statement whose key is not fully bound, or one that binds no
 * table's key (a keyspace-less statement) gives undefined: it is not routed by replica.
 */
export function preparedPartitionKey(body: Buffer, version: number): PartitionKeyMarkers | undefined {
  if (version < 4) return undefined;
  const result = decodeResult(body, version);
  if (result.kind !== 'Prepared') return undefined;
  const { pkIndexes, columns } = result.metadata;
  if (!pkIndexes || pkIndexes.length === 0) return undefined;
  const keyspace = columns[pkIndexes[0]!]?.keyspace;
  return keyspace ? { keyspace, indexes: pkIndexes } : undefined;
}
