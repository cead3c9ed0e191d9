import { InvalidArgumentError } from '@muster/core';
import type { Client } from 'cassandra-driver';
import { quoteName } from './cql-names.js';

interface SchemaTarget {
  readonly keyspace: string;
  readonly table: string;
  readonly partitionKey: readonly string[];
  readonly fenceColumn: string;
}

interface ColumnRow {
  column_name: string;
  kind: string;
  type: string;
  position: number;
}

/**
 * Makes sure the data table has the fence column, and that the fence's idea of the partition key
 * is the table's. Static when the table has clustering columns (one fence per partition, beside
 * every row of it); Cassandra refuses static columns in a table without clustering columns, where
 * a regular column is one per partition anyway.
 */
export async function ensureFenceColumn(client: Client, target: SchemaTarget): Promise<void> {
  const name = `${target.keyspace}.${target.table}`;
  const columns = await readColumns(client, target);
  if (columns.length === 0) {
    throw new InvalidArgumentError(
      `CassandraFence.ensureSchema: table ${name} does not exist; create it first (the fence only adds its column)`,
    );
  }
  const partitionKey = columns
    .filter((c) => c.kind === 'partition_key')
    .sort((a, b) => a.position - b.position)
    .map((c) => c.column_name);
  if (partitionKey.join(',') !== target.partitionKey.join(',')) {
    throw new InvalidArgumentError(
      `CassandraFence: partitionKey (${target.partitionKey.join(', ')}) is not the partition key of ${name}, which is (${partitionKey.join(', ')}); pass that`,
    );
  }
  await warnOfDefaultTtl(client, target, name);
  const wantStatic = columns.some((c) => c.kind === 'clustering');
  const existing = columns.find((c) => c.column_name === target.fenceColumn);
  if (existing) return checkExisting(name, target.fenceColumn, existing, wantStatic);
  const alter = `ALTER TABLE ${quoteName(target.keyspace)}.${quoteName(target.table)} ADD ${quoteName(target.fenceColumn)} bigint${wantStatic ? ' static' : ''}`;
  try {
    await client.execute(alter);
  } catch (error) {
    // Another process added it first: fine if it is the column we would have added.
    const added = (await readColumns(client, target)).find((c) => c.column_name === target.fenceColumn);
    if (!added) throw error;
    checkExisting(name, target.fenceColumn, added, wantStatic);
  }
}

function checkExisting(table: string, column: string, row: ColumnRow, wantStatic: boolean): void {
  const kind = wantStatic ? 'static' : 'regular';
  if (row.type !== 'bigint' || row.kind !== kind) {
    throw new InvalidArgumentError(
      `CassandraFence: column ${column} of ${table} is a ${row.kind} ${row.type}, but the fence needs a ${kind} bigint; ` +
        `choose another fenceColumn, or drop that column`,
    );
  }
}

/**
 * A table default TTL is accepted, not refused: the fence is written `USING TTL 0`, so it outlives
 * the data, and data that expires is a legitimate design. But the user should know that each fenced
 * partition then keeps its fence (a row of nulls in reads) after its rows expire, for good.
 */
async function warnOfDefaultTtl(client: Client, target: SchemaTarget, name: string): Promise<void> {
  const result = await client.execute(
    'SELECT default_time_to_live FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?',
    [target.keyspace, target.table],
    { prepare: true },
  );
  const ttl = Number(result.rows[0]?.['default_time_to_live'] ?? 0);
  if (ttl > 0) {
    process.emitWarning(
      `CassandraFence: table ${name} has default_time_to_live = ${ttl} s; the fence is written with USING TTL 0 and does not expire, ` +
        `so each fenced partition keeps its fence (a row with null columns in reads) after its rows expire; ` +
        `deleting the partition would delete the fence too (see the README)`,
      { type: 'MusterWarning', code: 'MUSTER_FENCE_TABLE_TTL' },
    );
  }
}

async function readColumns(client: Client, target: SchemaTarget): Promise<ColumnRow[]> {
  const result = await client.execute(
    'SELECT column_name, kind, type, position FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
    [target.keyspace, target.table],
    { prepare: true },
  );
  return result.rows as unknown as ColumnRow[];
}
