import { encodingError, ProtocolError } from './errors.js';
import type { Reader } from './reader.js';
import type { Writer } from './writer.js';

/**
 * CQL data types as [option]s (spec §4.2.5.2, "Valid option ids"): a native type is its id alone;
 * custom, list, set, map, UDT and tuple carry a value after the id.
 */
export const DataTypeId = {
  CUSTOM: 0x0000,
  ASCII: 0x0001,
  BIGINT: 0x0002,
  BLOB: 0x0003,
  BOOLEAN: 0x0004,
  COUNTER: 0x0005,
  DECIMAL: 0x0006,
  DOUBLE: 0x0007,
  FLOAT: 0x0008,
  INT: 0x0009,
  TIMESTAMP: 0x000b,
  UUID: 0x000c,
  VARCHAR: 0x000d,
  VARINT: 0x000e,
  TIMEUUID: 0x000f,
  INET: 0x0010,
  DATE: 0x0011,
  TIME: 0x0012,
  SMALLINT: 0x0013,
  TINYINT: 0x0014,
  DURATION: 0x0015,
  LIST: 0x0020,
  MAP: 0x0021,
  SET: 0x0022,
  UDT: 0x0030,
  TUPLE: 0x0031,
} as const;

type Id = typeof DataTypeId;
export type NativeTypeId = Exclude<Id[keyof Id], Id['CUSTOM'] | Id['LIST'] | Id['MAP'] | Id['SET'] | Id['UDT'] | Id['TUPLE']>;

export type DataType =
  | { readonly id: NativeTypeId }
  | { readonly id: Id['CUSTOM']; readonly className: string }
  | { readonly id: Id['LIST'] | Id['SET']; readonly element: DataType }
  | { readonly id: Id['MAP']; readonly key: DataType; readonly value: DataType }
  | {
      readonly id: Id['UDT'];
      readonly keyspace: string;
      readonly name: string;
      readonly fields: readonly { readonly name: string; readonly type: DataType }[];
    }
  | { readonly id: Id['TUPLE']; readonly elements: readonly DataType[] };

const nativeNames = new Map<number, string>([
  [DataTypeId.ASCII, 'ascii'],
  [DataTypeId.BIGINT, 'bigint'],
  [DataTypeId.BLOB, 'blob'],
  [DataTypeId.BOOLEAN, 'boolean'],
  [DataTypeId.COUNTER, 'counter'],
  [DataTypeId.DECIMAL, 'decimal'],
  [DataTypeId.DOUBLE, 'double'],
  [DataTypeId.FLOAT, 'float'],
  [DataTypeId.INT, 'int'],
  [DataTypeId.TIMESTAMP, 'timestamp'],
  [DataTypeId.UUID, 'uuid'],
  [DataTypeId.VARCHAR, 'text'],
  [DataTypeId.VARINT, 'varint'],
  [DataTypeId.TIMEUUID, 'timeuuid'],
  [DataTypeId.INET, 'inet'],
  [DataTypeId.DATE, 'date'],
  [DataTypeId.TIME, 'time'],
  [DataTypeId.SMALLINT, 'smallint'],
  [DataTypeId.TINYINT, 'tinyint'],
  [DataTypeId.DURATION, 'duration'],
]);

/** Shorthands for the types the virtual system tables use. */
export const types = {
  ascii: { id: DataTypeId.ASCII },
  bigint: { id: DataTypeId.BIGINT },
  blob: { id: DataTypeId.BLOB },
  boolean: { id: DataTypeId.BOOLEAN },
  int: { id: DataTypeId.INT },
  timestamp: { id: DataTypeId.TIMESTAMP },
  uuid: { id: DataTypeId.UUID },
  varchar: { id: DataTypeId.VARCHAR },
  timeuuid: { id: DataTypeId.TIMEUUID },
  inet: { id: DataTypeId.INET },
  list: (element: DataType): DataType => ({ id: DataTypeId.LIST, element }),
  set: (element: DataType): DataType => ({ id: DataTypeId.SET, element }),
  map: (key: DataType, value: DataType): DataType => ({ id: DataTypeId.MAP, key, value }),
} as const satisfies Record<string, DataType | ((...args: DataType[]) => DataType)>;

/** Nesting deeper than this is refused: real schemas stay far below, hostile input would not. */
const MAX_TYPE_DEPTH = 32;

export function readDataType(reader: Reader, depth = 0): DataType {
  if (depth > MAX_TYPE_DEPTH) throw new ProtocolError(`Data type nested deeper than ${MAX_TYPE_DEPTH} levels`);
  const id = reader.readShort();
  switch (id) {
    case DataTypeId.CUSTOM:
      return { id, className: reader.readString() };
    case DataTypeId.LIST:
    case DataTypeId.SET:
      return { id, element: readDataType(reader, depth + 1) };
    case DataTypeId.MAP:
      return { id, key: readDataType(reader, depth + 1), value: readDataType(reader, depth + 1) };
    case DataTypeId.UDT: {
      const keyspace = reader.readString();
      const name = reader.readString();
      const n = reader.readShort();
      const fields: { name: string; type: DataType }[] = [];
      for (let i = 0; i < n; i++) fields.push({ name: reader.readString(), type: readDataType(reader, depth + 1) });
      return { id, keyspace, name, fields };
    }
    case DataTypeId.TUPLE: {
      const n = reader.readShort();
      const elements: DataType[] = [];
      for (let i = 0; i < n; i++) elements.push(readDataType(reader, depth + 1));
      return { id, elements };
    }
    default:
      if (!nativeNames.has(id)) throw new ProtocolError(`Unknown data type option id 0x${id.toString(16).padStart(4, '0')}`);
      return { id: id as NativeTypeId };
  }
}

export function writeDataType(writer: Writer, type: DataType): void {
  writer.writeShort(type.id);
  switch (type.id) {
    case DataTypeId.CUSTOM:
      writer.writeString(type.className);
      return;
    case DataTypeId.LIST:
    case DataTypeId.SET:
      writeDataType(writer, type.element);
      return;
    case DataTypeId.MAP:
      writeDataType(writer, type.key);
      writeDataType(writer, type.value);
      return;
    case DataTypeId.UDT:
      writer.writeString(type.keyspace).writeString(type.name).writeShort(type.fields.length);
      for (const f of type.fields) {
        writer.writeString(f.name);
        writeDataType(writer, f.type);
      }
      return;
    case DataTypeId.TUPLE:
      writer.writeShort(type.elements.length);
      for (const e of type.elements) writeDataType(writer, e);
      return;
  }
}

/** The CQL spelling of a type, as `system_schema` and error messages write it. */
export function cqlTypeName(type: DataType): string {
  switch (type.id) {
    case DataTypeId.CUSTOM:
      return `'${type.className}'`;
    case DataTypeId.LIST:
      return `list<${cqlTypeName(type.element)}>`;
    case DataTypeId.SET:
      return `set<${cqlTypeName(type.element)}>`;
    case DataTypeId.MAP:
      return `map<${cqlTypeName(type.key)}, ${cqlTypeName(type.value)}>`;
    case DataTypeId.UDT:
      return type.name;
    case DataTypeId.TUPLE:
      return `tuple<${type.elements.map(cqlTypeName).join(', ')}>`;
    default:
      return nativeNames.get(type.id) ?? `0x${(type.id as number).toString(16)}`;
  }
}

export function unsupportedType(type: DataType, what: string): ProtocolError {
  return encodingError(`${what} of type ${cqlTypeName(type)} is not supported`);
}
