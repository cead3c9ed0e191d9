import { addressToBytes, bytesToAddress } from './inet.js';
import { encodingError, ProtocolError } from './errors.js';
import { Reader } from './reader.js';
import { DataTypeId, cqlTypeName, unsupportedType, type DataType } from './types.js';
import { Writer } from './writer.js';

/**
 * Cell values (spec §6, "Data Type Serialization Formats", v3+ collection layout) for the types the
 * virtual system tables use, and a few neighbours that cost nothing:
 *   ascii, varchar → string     int, smallint, tinyint, float, double → number
 *   bigint, counter, time → bigint     boolean → boolean     blob → Buffer     timestamp → Date
 *   uuid, timeuuid → canonical string     inet → address string
 *   list, set, tuple → array     map → Map     udt → Map of field name to value
 * Decimal, varint, date and duration cells are not decoded here (they stay bytes in passthrough).
 */
export type CellValue =
  string | number | bigint | boolean | Buffer | Date | null | readonly CellValue[] | ReadonlyMap<CellValue, CellValue>;

const DAY_MS = 86_400_000;

function mismatch(type: DataType, value: unknown): ProtocolError {
  const shown = typeof value === 'object' ? (value?.constructor?.name ?? 'null') : typeof value;
  return encodingError(`Cannot encode a ${shown} as ${cqlTypeName(type)}`);
}

/** The [bytes] content of one cell; `null` encodes as a null cell. */
export function encodeCell(type: DataType, value: CellValue): Buffer | null {
  if (value === null) return null;
  const w = new Writer(16);
  writeCell(w, type, value);
  return w.finish();
}

function writeCell(w: Writer, type: DataType, value: Exclude<CellValue, null>): void {
  switch (type.id) {
    case DataTypeId.ASCII:
    case DataTypeId.VARCHAR:
      if (typeof value !== 'string') throw mismatch(type, value);
      w.writeRaw(Buffer.from(value, type.id === DataTypeId.ASCII ? 'latin1' : 'utf8'));
      return;
    case DataTypeId.INT:
      if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(type, value);
      w.writeInt(value);
      return;
    case DataTypeId.SMALLINT:
    case DataTypeId.TINYINT: {
      if (typeof value !== 'number' || !Number.isInteger(value)) throw mismatch(type, value);
      const b = Buffer.alloc(type.id === DataTypeId.SMALLINT ? 2 : 1);
      if (b.length === 2) b.writeInt16BE(value);
      else b.writeInt8(value);
      w.writeRaw(b);
      return;
    }
    case DataTypeId.BIGINT:
    case DataTypeId.COUNTER:
    case DataTypeId.TIME:
      if (typeof value !== 'bigint') throw mismatch(type, value);
      w.writeLong(value);
      return;
    case DataTypeId.TIMESTAMP:
      if (!(value instanceof Date)) throw mismatch(type, value);
      w.writeLong(BigInt(value.getTime()));
      return;
    case DataTypeId.DATE: {
      // Days since the epoch, unsigned, with the epoch at 2^31; the value is that day's midnight UTC.
      if (!(value instanceof Date)) throw mismatch(type, value);
      const b = Buffer.alloc(4);
      b.writeUInt32BE((Math.floor(value.getTime() / DAY_MS) + 2 ** 31) >>> 0);
      w.writeRaw(b);
      return;
    }
    case DataTypeId.DOUBLE:
    case DataTypeId.FLOAT: {
      if (typeof value !== 'number') throw mismatch(type, value);
      const b = Buffer.alloc(type.id === DataTypeId.DOUBLE ? 8 : 4);
      if (b.length === 8) b.writeDoubleBE(value);
      else b.writeFloatBE(value);
      w.writeRaw(b);
      return;
    }
    case DataTypeId.BOOLEAN:
      if (typeof value !== 'boolean') throw mismatch(type, value);
      w.writeByte(value ? 1 : 0);
      return;
    case DataTypeId.BLOB:
      if (!Buffer.isBuffer(value)) throw mismatch(type, value);
      w.writeRaw(value);
      return;
    case DataTypeId.UUID:
    case DataTypeId.TIMEUUID:
      if (typeof value !== 'string') throw mismatch(type, value);
      w.writeUuid(value);
      return;
    case DataTypeId.INET:
      if (typeof value !== 'string') throw mismatch(type, value);
      w.writeRaw(addressToBytes(value));
      return;
    case DataTypeId.LIST:
    case DataTypeId.SET:
      if (!Array.isArray(value)) throw mismatch(type, value);
      w.writeInt(value.length);
      for (const e of value as readonly CellValue[]) w.writeBytes(encodeCell(type.element, e));
      return;
    case DataTypeId.MAP:
      if (!(value instanceof Map)) throw mismatch(type, value);
      w.writeInt(value.size);
      for (const [k, v] of value as ReadonlyMap<CellValue, CellValue>) {
        w.writeBytes(encodeCell(type.key, k)).writeBytes(encodeCell(type.value, v));
      }
      return;
    case DataTypeId.TUPLE:
      if (!Array.isArray(value)) throw mismatch(type, value);
      type.elements.forEach((t, i) => w.writeBytes(encodeCell(t, (value as readonly CellValue[])[i] ?? null)));
      return;
    case DataTypeId.UDT:
      if (!(value instanceof Map)) throw mismatch(type, value);
      for (const f of type.fields) w.writeBytes(encodeCell(f.type, (value as ReadonlyMap<CellValue, CellValue>).get(f.name) ?? null));
      return;
    default:
      throw unsupportedType(type, 'Encoding a cell');
  }
}

/**
 * The value of one cell. `null` for a null cell, and for an empty cell of a non-string type (the
 * legacy "empty value"). Wrong sizes and truncated collections throw {@link ProtocolError}.
 */
export function decodeCell(type: DataType, bytes: Buffer | null): CellValue {
  if (bytes === null) return null;
  const textual = type.id === DataTypeId.ASCII || type.id === DataTypeId.VARCHAR || type.id === DataTypeId.BLOB;
  if (bytes.length === 0 && !textual) return null;
  const fixed = (n: number) => {
    if (bytes.length !== n) throw new ProtocolError(`A ${cqlTypeName(type)} cell has ${n} bytes, not ${bytes.length}`);
  };
  switch (type.id) {
    case DataTypeId.ASCII:
      return bytes.toString('latin1');
    case DataTypeId.VARCHAR:
      return bytes.toString('utf8');
    case DataTypeId.BLOB:
      return bytes;
    case DataTypeId.INT:
      fixed(4);
      return bytes.readInt32BE(0);
    case DataTypeId.SMALLINT:
      fixed(2);
      return bytes.readInt16BE(0);
    case DataTypeId.TINYINT:
      fixed(1);
      return bytes.readInt8(0);
    case DataTypeId.BIGINT:
    case DataTypeId.COUNTER:
    case DataTypeId.TIME:
      fixed(8);
      return bytes.readBigInt64BE(0);
    case DataTypeId.TIMESTAMP:
      fixed(8);
      return new Date(Number(bytes.readBigInt64BE(0)));
    case DataTypeId.DATE:
      fixed(4);
      return new Date((bytes.readUInt32BE(0) - 2 ** 31) * DAY_MS);
    case DataTypeId.DOUBLE:
      fixed(8);
      return bytes.readDoubleBE(0);
    case DataTypeId.FLOAT:
      fixed(4);
      return bytes.readFloatBE(0);
    case DataTypeId.BOOLEAN:
      fixed(1);
      return bytes[0] !== 0;
    case DataTypeId.UUID:
    case DataTypeId.TIMEUUID:
      fixed(16);
      return new Reader(bytes).readUuid();
    case DataTypeId.INET:
      if (bytes.length !== 4 && bytes.length !== 16) fixed(4);
      return bytesToAddress(bytes);
    default:
      return decodeComposite(type, new Reader(bytes));
  }
}

function decodeComposite(type: DataType, r: Reader): CellValue {
  switch (type.id) {
    case DataTypeId.LIST:
    case DataTypeId.SET: {
      const n = r.readInt();
      const out: CellValue[] = [];
      for (let i = 0; i < n; i++) out.push(decodeCell(type.element, r.readBytes()));
      return out;
    }
    case DataTypeId.MAP: {
      const n = r.readInt();
      const out = new Map<CellValue, CellValue>();
      for (let i = 0; i < n; i++) out.set(decodeCell(type.key, r.readBytes()), decodeCell(type.value, r.readBytes()));
      return out;
    }
    case DataTypeId.TUPLE:
      return type.elements.map((t) => (r.remaining > 0 ? decodeCell(t, r.readBytes()) : null));
    case DataTypeId.UDT: {
      const out = new Map<CellValue, CellValue>();
      for (const f of type.fields) out.set(f.name, r.remaining > 0 ? decodeCell(f.type, r.readBytes()) : null);
      return out;
    }
    default:
      throw unsupportedType(type, 'Decoding a cell');
  }
}
