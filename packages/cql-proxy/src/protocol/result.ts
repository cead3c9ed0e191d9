import { encodingError, ProtocolError } from './errors.js';
import { readSchemaChange, writeSchemaChange, type SchemaChange } from './event.js';
import { Reader } from './reader.js';
import { readDataType, writeDataType, type DataType } from './types.js';
import { Writer } from './writer.js';

/** RESULT (spec §4.2.5): an [int] kind, then the kind's body. Kind names are the spec's. */
export const ResultKind = { Void: 0x0001, Rows: 0x0002, Set_keyspace: 0x0003, Prepared: 0x0004, Schema_change: 0x0005 } as const;

export const RowsFlag = { GLOBAL_TABLES_SPEC: 0x0001, HAS_MORE_PAGES: 0x0002, NO_METADATA: 0x0004, METADATA_CHANGED: 0x0008 } as const;

export interface ColumnSpec {
  readonly keyspace: string;
  readonly table: string;
  readonly name: string;
  readonly type: DataType;
}

/** <metadata> of Rows, and <result_metadata> of Prepared. Without `columns` it is No_metadata. */
export interface RowsMetadata {
  readonly columnCount: number;
  readonly columns?: readonly ColumnSpec[];
  /** Present iff Has_more_pages. */
  readonly pagingState?: Buffer | null;
  /** v5, present iff Metadata_changed. */
  readonly newMetadataId?: Buffer;
}

/** <metadata> of Prepared: the bind markers, and from v4 the partition key's marker indexes. */
export interface PreparedMetadata {
  readonly columns: readonly ColumnSpec[];
  readonly pkIndexes?: readonly number[];
}

export type Result =
  | { readonly kind: 'Void' }
  | { readonly kind: 'Rows'; readonly metadata: RowsMetadata; readonly rows: readonly (readonly (Buffer | null)[])[] }
  | { readonly kind: 'Set_keyspace'; readonly keyspace: string }
  | {
      readonly kind: 'Prepared';
      readonly id: Buffer;
      /** v5 only. */
      readonly resultMetadataId?: Buffer;
      readonly metadata: PreparedMetadata;
      readonly resultMetadata: RowsMetadata;
    }
  | { readonly kind: 'Schema_change'; readonly change: SchemaChange };

function readCount(r: Reader, what: string): number {
  const n = r.readInt();
  if (n < 0) throw new ProtocolError(`Negative ${what} ${n}`);
  return n;
}

function readColumnSpecs(r: Reader, flags: number, count: number): ColumnSpec[] {
  const global = flags & RowsFlag.GLOBAL_TABLES_SPEC ? { keyspace: r.readString(), table: r.readString() } : undefined;
  const columns: ColumnSpec[] = [];
  for (let i = 0; i < count; i++) {
    const keyspace = global?.keyspace ?? r.readString();
    const table = global?.table ?? r.readString();
    columns.push({ keyspace, table, name: r.readString(), type: readDataType(r) });
  }
  return columns;
}

/** The one keyspace and table every column belongs to, if there is one: then the global spec is used. */
function sharedTable(columns: readonly ColumnSpec[]): ColumnSpec | undefined {
  const first = columns[0];
  return first && columns.every((c) => c.keyspace === first.keyspace && c.table === first.table) ? first : undefined;
}

function writeColumnSpecs(w: Writer, columns: readonly ColumnSpec[]): void {
  const shared = sharedTable(columns);
  if (shared) w.writeString(shared.keyspace).writeString(shared.table);
  for (const c of columns) {
    if (!shared) w.writeString(c.keyspace).writeString(c.table);
    w.writeString(c.name);
    writeDataType(w, c.type);
  }
}

const globalFlag = (columns: readonly ColumnSpec[]) => (sharedTable(columns) ? RowsFlag.GLOBAL_TABLES_SPEC : 0);

export function readRowsMetadata(r: Reader, version: number): RowsMetadata {
  const flags = r.readInt();
  const columnCount = readCount(r, 'column count');
  const out: { -readonly [K in keyof RowsMetadata]: RowsMetadata[K] } = { columnCount };
  if (flags & RowsFlag.HAS_MORE_PAGES) out.pagingState = r.readBytes();
  if (version >= 5 && flags & RowsFlag.METADATA_CHANGED) out.newMetadataId = r.readShortBytes();
  if (!(flags & RowsFlag.NO_METADATA)) out.columns = readColumnSpecs(r, flags, columnCount);
  return out;
}

export function writeRowsMetadata(w: Writer, m: RowsMetadata, version: number): void {
  if (m.columns && m.columns.length !== m.columnCount) {
    throw encodingError(`Rows metadata lists ${m.columns.length} columns but counts ${m.columnCount}`);
  }
  let flags = m.columns ? globalFlag(m.columns) : RowsFlag.NO_METADATA;
  if (m.pagingState !== undefined) flags |= RowsFlag.HAS_MORE_PAGES;
  if (m.newMetadataId !== undefined) {
    if (version < 5) throw encodingError(`A new result metadata id needs protocol v5, not v${version}`);
    flags |= RowsFlag.METADATA_CHANGED;
  }
  w.writeInt(flags).writeInt(m.columnCount);
  if (m.pagingState !== undefined) w.writeBytes(m.pagingState);
  if (m.newMetadataId !== undefined) w.writeShortBytes(m.newMetadataId);
  if (m.columns) writeColumnSpecs(w, m.columns);
}

function readPreparedMetadata(r: Reader, version: number): PreparedMetadata {
  const flags = r.readInt();
  const count = readCount(r, 'bind marker count');
  let pkIndexes: number[] | undefined;
  if (version >= 4) {
    const n = readCount(r, 'partition key count');
    pkIndexes = [];
    for (let i = 0; i < n; i++) pkIndexes.push(r.readShort());
  } else if (flags & RowsFlag.HAS_MORE_PAGES) {
    r.readBytes(); // v3 reuses the Rows layout; the flag "can be assumed off" but is harmless to honour.
  }
  const columns = flags & RowsFlag.NO_METADATA ? [] : readColumnSpecs(r, flags, count);
  return pkIndexes ? { columns, pkIndexes } : { columns };
}

function writePreparedMetadata(w: Writer, m: PreparedMetadata, version: number): void {
  w.writeInt(globalFlag(m.columns)).writeInt(m.columns.length);
  if (version >= 4) {
    const pk = m.pkIndexes ?? [];
    w.writeInt(pk.length);
    for (const i of pk) w.writeShort(i);
  }
  writeColumnSpecs(w, m.columns);
}

function readRows(r: Reader, metadata: RowsMetadata): (Buffer | null)[][] {
  const count = readCount(r, 'row count');
  if (count > 0 && metadata.columnCount === 0) throw new ProtocolError(`${count} rows without columns`);
  const rows: (Buffer | null)[][] = [];
  for (let i = 0; i < count; i++) {
    const row: (Buffer | null)[] = [];
    for (let j = 0; j < metadata.columnCount; j++) row.push(r.readBytes());
    rows.push(row);
  }
  return rows;
}

export function decodeResult(body: Buffer, version: number): Result {
  const r = new Reader(body);
  const kind = r.readInt();
  switch (kind) {
    case ResultKind.Void:
      return { kind: 'Void' };
    case ResultKind.Rows: {
      const metadata = readRowsMetadata(r, version);
      return { kind: 'Rows', metadata, rows: readRows(r, metadata) };
    }
    case ResultKind.Set_keyspace:
      return { kind: 'Set_keyspace', keyspace: r.readString() };
    case ResultKind.Prepared: {
      const id = r.readShortBytes();
      const resultMetadataId = version >= 5 ? r.readShortBytes() : undefined;
      const metadata = readPreparedMetadata(r, version);
      const resultMetadata = readRowsMetadata(r, version);
      return resultMetadataId
        ? { kind: 'Prepared', id, resultMetadataId, metadata, resultMetadata }
        : { kind: 'Prepared', id, metadata, resultMetadata };
    }
    case ResultKind.Schema_change:
      return { kind: 'Schema_change', change: readSchemaChange(r) };
    default:
      throw new ProtocolError(`Unknown RESULT kind ${kind}`);
  }
}

export function encodeResult(m: Result, version: number): Buffer {
  const w = new Writer(256).writeInt(ResultKind[m.kind]);
  switch (m.kind) {
    case 'Void':
      break;
    case 'Rows':
      writeRowsMetadata(w, m.metadata, version);
      w.writeInt(m.rows.length);
      for (const row of m.rows) {
        if (row.length !== m.metadata.columnCount) {
          throw encodingError(`A row has ${row.length} cells for ${m.metadata.columnCount} columns`);
        }
        for (const cell of row) w.writeBytes(cell);
      }
      break;
    case 'Set_keyspace':
      w.writeString(m.keyspace);
      break;
    case 'Prepared':
      w.writeShortBytes(m.id);
      if (version >= 5) {
        if (!m.resultMetadataId) throw encodingError('A v5 Prepared result needs a result metadata id');
        w.writeShortBytes(m.resultMetadataId);
      }
      writePreparedMetadata(w, m.metadata, version);
      writeRowsMetadata(w, m.resultMetadata, version);
      break;
    case 'Schema_change':
      writeSchemaChange(w, m.change, version);
      break;
  }
  return w.finish();
}
