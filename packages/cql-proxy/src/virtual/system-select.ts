import { decodeCell, encodeCell, type CellValue } from '../protocol/cells.js';
import { UNSET } from '../protocol/reader.js';
import type { BoundValue } from '../protocol/query-parameters.js';
import type { ColumnSpec, Result } from '../protocol/result.js';
import { DataTypeId, cqlTypeName, types, type DataType } from '../protocol/types.js';
import { canonicalAddress } from './address.js';
import { compileCall, FunctionRefusal } from './system-functions.js';
import { localRow, peerRows, type Row, type RowContext } from './system-rows.js';
import type { BindMarker, Literal, Relation, SystemQuery, Term } from './system-query.js';
import { schemaOf, type SystemSchemas, type TableSchema } from './system-tables.js';

/**
 * Answers a parsed system-table SELECT from the virtual rows, as a Cassandra server would: WHERE
 * equality and IN on the primary key (other columns with ALLOW FILTERING), literal, positional or named
 * bind values, LIMIT, selectors with aliases and count. Every refusal is a message for a CQL
 * `INVALID` error; nothing is forwarded.
 */

/** QUERY/EXECUTE values as the codec reads them: in marker order, or paired with `names`. */
export interface BindValues {
  readonly values?: readonly BoundValue[];
  readonly names?: readonly string[];
}

export interface SelectContext extends RowContext {
  readonly schemas: SystemSchemas;
}

export type SelectResult =
  | { readonly ok: true; readonly columns: readonly ColumnSpec[]; readonly rows: readonly (readonly CellValue[])[] }
  | { readonly ok: false; readonly message: string };

export type PreparedShape =
  | {
      readonly ok: true;
      /** The bind markers' names and types, for PREPARED's metadata. */
      readonly variables: readonly ColumnSpec[];
      /** Marker indexes of the partition key, when every partition key column is bound by a marker. */
      readonly pkIndexes: readonly number[];
      readonly columns: readonly ColumnSpec[];
    }
  | { readonly ok: false; readonly message: string };

class Refusal extends Error {}

const DURATION: DataType = { id: DataTypeId.DURATION };
const INTEGER_TYPES = new Set<number>([
  DataTypeId.INT,
  DataTypeId.BIGINT,
  DataTypeId.SMALLINT,
  DataTypeId.TINYINT,
  DataTypeId.VARINT,
  DataTypeId.COUNTER,
]);
const TEXT_TYPES = new Set<number>([DataTypeId.VARCHAR, DataTypeId.ASCII]);
const INT32_MAX = 2n ** 31n - 1n;

function schemaFor(query: SystemQuery, schemas: SystemSchemas): TableSchema {
  const schema = schemaOf(schemas, query.table);
  if (schema === undefined) throw new Refusal(`unconfigured table ${query.table}`);
  return schema;
}

function column(schema: TableSchema, name: string): ColumnSpec {
  const c = schema.columns.find((x) => x.name === name);
  if (c === undefined) throw new Refusal(`Undefined column name ${name} in table system.${schema.table}`);
  return c;
}

interface Output {
  readonly spec: ColumnSpec;
  readonly read: (rows: readonly Row[]) => CellValue;
}

/** The result columns, and how each is computed from the matching rows. */
function outputs(query: SystemQuery, schema: TableSchema): { outputs: Output[]; aggregate: boolean } {
  const named = (name: string, type: DataType): ColumnSpec => ({ keyspace: 'system', table: schema.table, name, type });
  if (query.selectors === undefined) {
    return { outputs: schema.columns.map((c) => ({ spec: c, read: (rows) => rows[0]?.get(c.name) ?? null })), aggregate: false };
  }
  const aggregate = query.selectors.some((s) => s.kind === 'count');
  const out = query.selectors.map((s): Output => {
    if (s.kind === 'column') {
      const c = column(schema, s.column);
      return { spec: named(s.alias ?? c.name, c.type), read: (rows) => rows[0]?.get(c.name) ?? null };
    }
    if (s.kind === 'call') {
      const call = compileCall(s.call, (name) => column(schema, name).type);
      return { spec: named(s.alias ?? call.name, call.type), read: (rows) => call.evaluate(rows[0]) };
    }
    // Cassandra types count as bigint and names it `count`, or `system.count(col)` for a column.
    const counted = s.column === undefined ? undefined : column(schema, s.column).name;
    const name = s.alias ?? (counted === undefined ? 'count' : `system.count(${counted})`);
    return {
      spec: named(name, types.bigint),
      read: (rows) => BigInt(counted === undefined ? rows.length : rows.filter((r) => (r.get(counted) ?? null) !== null).length),
    };
  });
  return { outputs: out, aggregate };
}

/** One spelling per value, so a row cell, a literal and a bind value compare as equal when the server would. */
function comparable(type: DataType, value: CellValue): string {
  if (value === null) return '\u0000null';
  if (type.id === DataTypeId.INET && typeof value === 'string') return canonicalAddress(value);
  if ((type.id === DataTypeId.UUID || type.id === DataTypeId.TIMEUUID) && typeof value === 'string') return value.toLowerCase();
  if (INTEGER_TYPES.has(type.id) && (typeof value === 'number' || typeof value === 'bigint')) return BigInt(value).toString();
  if (Buffer.isBuffer(value)) return value.toString('hex');
  if (value instanceof Date) return String(value.getTime());
  return String(value);
}

function literalValue(literal: Literal, c: ColumnSpec): CellValue {
  const shown =
    literal.type === 'string'
      ? `'${literal.value}'`
      : literal.type === 'boolean'
        ? String(literal.value)
        : literal.type === 'null'
          ? 'null'
          : literal.text;
  const invalid = () =>
    new Refusal(`Invalid ${literal.type.toUpperCase()} constant (${shown}) for "${c.name}" of type ${cqlTypeName(c.type)}`);
  const id = c.type.id;
  switch (literal.type) {
    case 'null':
      throw new Refusal(`Invalid null value in condition for column ${c.name}`);
    case 'string':
      if (TEXT_TYPES.has(id)) return literal.value;
      if (id === DataTypeId.INET) {
        try {
          return canonicalAddress(literal.value);
        } catch {
          throw new Refusal(`Unable to make inet address from '${literal.value}'`);
        }
      }
      throw invalid();
    case 'integer':
      if (INTEGER_TYPES.has(id)) return BigInt(literal.text);
      if (id === DataTypeId.FLOAT || id === DataTypeId.DOUBLE) return Number(literal.text);
      throw invalid();
    case 'float':
      if (id === DataTypeId.FLOAT || id === DataTypeId.DOUBLE) return Number(literal.text);
      throw invalid();
    case 'uuid':
      if (id === DataTypeId.UUID || id === DataTypeId.TIMEUUID) return literal.text.toLowerCase();
      throw invalid();
    case 'blob':
      if (id === DataTypeId.BLOB) return Buffer.from(literal.text.slice(2), 'hex');
      throw invalid();
    case 'boolean':
      if (id === DataTypeId.BOOLEAN) return literal.value;
      throw invalid();
    case 'duration':
      throw invalid();
  }
}

/** The raw value bound to `marker`: by position, or by name when the client sent names. */
function boundValue(marker: BindMarker, bind: BindValues | undefined): BoundValue {
  const values = bind?.values ?? [];
  if (bind?.names !== undefined) {
    let i = bind.names.indexOf(marker.name);
    if (i < 0) i = bind.names.findIndex((n) => n.toLowerCase() === marker.name.toLowerCase());
    const v = i < 0 ? undefined : values[i];
    if (v === undefined) throw new Refusal(`No value given for the bind marker ${marker.named ? ':' : ''}${marker.name}`);
    return v;
  }
  return values[marker.index] ?? null;
}

function decode(type: DataType, bytes: Buffer, what: string): CellValue {
  try {
    return decodeCell(type, bytes);
  } catch (error) {
    throw new Refusal(`Invalid value for ${what} of type ${cqlTypeName(type)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function checkBindCount(query: SystemQuery, bind: BindValues | undefined): void {
  const given = bind?.values?.length ?? 0;
  if (bind?.names === undefined && given !== query.markers.length) {
    throw new Refusal('Invalid amount of bind variables'); // Cassandra 5.0's words
  }
}

function restrictionValue(term: Term, c: ColumnSpec, query: SystemQuery, bind: BindValues | undefined): CellValue {
  if (term.kind === 'literal') return literalValue(term.literal, c);
  const marker = query.markers[term.index];
  if (marker === undefined) throw new Refusal(`No bind marker ${term.index}`);
  const raw = boundValue(marker, bind);
  if (raw === UNSET) throw new Refusal(`Invalid unset value for column ${c.name}`);
  if (raw === null) throw new Refusal(`Invalid null value in condition for column ${c.name}`);
  return decode(c.type, raw, `column ${c.name}`);
}

/** The values a relation accepts, each already decoded and checked against the column's type. */
function relationValues(relation: Relation, c: ColumnSpec, query: SystemQuery, bind: BindValues | undefined): CellValue[] {
  if ('value' in relation) return [restrictionValue(relation.value, c, query, bind)];
  if ('in' in relation) return relation.in.map((term) => restrictionValue(term, c, query, bind));
  const term = relation.inList;
  if (term.kind === 'literal') throw new Refusal(`IN on ${c.name} takes a list of values or one bind marker`);
  const marker = query.markers[term.index];
  if (marker === undefined) throw new Refusal(`No bind marker ${term.index}`);
  const raw = boundValue(marker, bind);
  if (raw === UNSET) throw new Refusal(`Invalid unset value for column ${c.name}`);
  if (raw === null) throw new Refusal(`Invalid null value for column ${c.name}`);
  const list = decode(types.list(c.type), raw, `IN on ${c.name}`);
  return Array.isArray(list) ? list.filter((v) => v !== null) : [];
}

/** The row filter of the WHERE clause, checked as Cassandra checks it. */
function filter(query: SystemQuery, schema: TableSchema, bind: BindValues | undefined): (row: Row) => boolean {
  const wanted = new Map<string, { type: DataType; values: Set<string> }>();
  for (const relation of query.where) {
    const c = column(schema, relation.column);
    if (wanted.has(c.name)) throw new Refusal(`${c.name} cannot be restricted by more than one relation if it includes an Equal`);
    if (c.type.id === DataTypeId.SET || c.type.id === DataTypeId.LIST || c.type.id === DataTypeId.MAP) {
      throw new Refusal(
        `Collection column '${c.name}' (${cqlTypeName(c.type)}) cannot be restricted by a '${'value' in relation ? '=' : 'IN'}' relation`,
      );
    }
    wanted.set(c.name, { type: c.type, values: new Set(relationValues(relation, c, query, bind).map((v) => comparable(c.type, v))) });
  }
  const keyBound = schema.partitionKey.every((k) => wanted.has(k));
  const needsFiltering = [...wanted.keys()].some((k) => !schema.partitionKey.includes(k) && (!schema.clustering.includes(k) || !keyBound));
  if (needsFiltering && !query.allowFiltering) {
    throw new Refusal(
      'Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. ' +
        'If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING',
    );
  }
  return (row) => [...wanted].every(([name, want]) => want.values.has(comparable(want.type, row.get(name) ?? null)));
}

function limitOf(query: SystemQuery, bind: BindValues | undefined): number | undefined {
  const term = query.limit;
  if (term === undefined) return undefined;
  let value: bigint;
  if (term.kind === 'literal') {
    if (term.literal.type !== 'integer') throw new Refusal(`Invalid LIMIT: expected an integer, got ${term.literal.type}`);
    value = BigInt(term.literal.text);
  } else {
    const marker = query.markers[term.index];
    if (marker === undefined) throw new Refusal(`No bind marker ${term.index}`);
    const raw = boundValue(marker, bind);
    if (raw === UNSET) return undefined; // an unset limit is no limit, as on a real server
    if (raw === null) throw new Refusal('Invalid null value of limit');
    value = BigInt(decode(types.int, raw, 'LIMIT') as number);
  }
  if (value <= 0n) throw new Refusal('LIMIT must be strictly positive');
  return Number(value > INT32_MAX ? INT32_MAX : value);
}

function checkTimeout(query: SystemQuery): void {
  // The answer is immediate, so the timeout only has to be well-formed.
  const t = query.timeout;
  if (t?.kind === 'literal' && t.literal.type !== 'duration') throw new Refusal('USING TIMEOUT takes a duration such as 500ms or 2s');
}

function rowsOf(schema: TableSchema, ctx: SelectContext): Row[] {
  return schema.table === 'local' ? [localRow(schema, ctx)] : peerRows(schema, ctx);
}

function refused(error: unknown): { ok: false; message: string } {
  if (error instanceof Refusal || error instanceof FunctionRefusal) return { ok: false, message: error.message };
  throw error;
}

/** Evaluates `query` against the view in `ctx`. */
export function selectSystemTable(query: SystemQuery, ctx: SelectContext, bind?: BindValues): SelectResult {
  try {
    const schema = schemaFor(query, ctx.schemas);
    const { outputs: out, aggregate } = outputs(query, schema);
    checkBindCount(query, bind);
    const keep = filter(query, schema, bind);
    const limit = limitOf(query, bind);
    checkTimeout(query);
    const matching = rowsOf(schema, ctx).filter(keep);
    // Aggregates fold all matching rows into one, and LIMIT then applies to that one row.
    const groups = aggregate ? [matching] : matching.map((r) => [r]);
    const rows = groups.slice(0, limit).map((g) => out.map((o) => o.read(g)));
    return { ok: true, columns: out.map((o) => o.spec), rows };
  } catch (error) {
    return refused(error);
  }
}

function markerType(marker: BindMarker, schema: TableSchema): DataType {
  switch (marker.receiver.kind) {
    case 'column':
      return column(schema, marker.receiver.column).type;
    case 'in':
      return types.list(column(schema, marker.receiver.column).type);
    case 'limit':
      return types.int;
    case 'timeout':
      return DURATION;
  }
}

/** What PREPARE answers for `query`: bind variables, partition key indexes, result columns. */
export function preparedShape(query: SystemQuery, schemas: SystemSchemas): PreparedShape {
  try {
    const schema = schemaFor(query, schemas);
    const columns = outputs(query, schema).outputs.map((o) => o.spec);
    const variables = query.markers.map((m): ColumnSpec => ({
      keyspace: 'system',
      table: schema.table,
      name: m.name,
      type: markerType(m, schema),
    }));
    // Only `key = ?` pins a partition a driver could route by; IN names several.
    const pkIndexes = schema.partitionKey.map((k) => {
      const r = query.where.find((w) => w.column === k);
      return r !== undefined && 'value' in r && r.value.kind === 'marker' ? r.value.index : undefined;
    });
    return { ok: true, variables, columns, pkIndexes: pkIndexes.every((i) => i !== undefined) ? pkIndexes : [] };
  } catch (error) {
    return refused(error);
  }
}

/** A successful selection as the codec's Rows result, each cell encoded with its column's type. */
export function toRowsResult(result: Extract<SelectResult, { ok: true }>): Result {
  return {
    kind: 'Rows',
    metadata: { columnCount: result.columns.length, columns: result.columns },
    rows: result.rows.map((row) => row.map((cell, i) => encodeCell(result.columns[i]?.type ?? types.blob, cell))),
  };
}
