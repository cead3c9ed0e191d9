import { randomUUID } from 'node:crypto';
import type { CellValue } from '../protocol/cells.js';
import { cqlTypeName, DataTypeId, types, type DataType } from '../protocol/types.js';
import { timeUuid, timeUuidMillis } from './timeuuid.js';

/**
 * The native functions drivers, cqlsh and load balancer probes put in a system.local read
 * (`SELECT now() FROM system.local`, `toTimestamp(now())`, `toJson(host_id)`, ...), evaluated by
 * the proxy with the types and result column names Cassandra 5.0 gives them.
 */

export type Argument = { readonly kind: 'column'; readonly column: string } | { readonly kind: 'call'; readonly call: FunctionCall };

export interface FunctionCall {
  /** Lower case, without the `system.` keyspace. */
  readonly name: string;
  readonly args: readonly Argument[];
}

export class FunctionRefusal extends Error {}

const DAY_MS = 86_400_000;
const date: DataType = { id: DataTypeId.DATE };
const time: DataType = { id: DataTypeId.TIME };

interface NativeFunction {
  /** The argument types it takes, by type id; one list per argument. */
  readonly params: readonly (readonly number[] | 'any')[];
  readonly returns: DataType;
  apply(args: readonly CellValue[], argTypes: readonly DataType[]): CellValue;
}

const TIMEUUID = [DataTypeId.TIMEUUID];
const millisOf = (value: CellValue): number =>
  typeof value === 'string' ? timeUuidMillis(value) : value instanceof Date ? value.getTime() : Number.NaN;
const midnight = (ms: number) => new Date(Math.floor(ms / DAY_MS) * DAY_MS);
const nullOr = (value: CellValue, f: (v: Exclude<CellValue, null>) => CellValue): CellValue => (value === null ? null : f(value));

const functions: Record<string, NativeFunction> = {
  now: { params: [], returns: types.timeuuid, apply: () => timeUuid() },
  currenttimeuuid: { params: [], returns: types.timeuuid, apply: () => timeUuid() },
  uuid: { params: [], returns: types.uuid, apply: () => randomUUID() },
  currenttimestamp: { params: [], returns: types.timestamp, apply: () => new Date() },
  currentdate: { params: [], returns: date, apply: () => midnight(Date.now()) },
  currenttime: { params: [], returns: time, apply: () => BigInt(Date.now() % DAY_MS) * 1_000_000n },
  totimestamp: {
    params: [[DataTypeId.TIMEUUID, DataTypeId.DATE]],
    returns: types.timestamp,
    apply: ([v]) => nullOr(v ?? null, (x) => new Date(millisOf(x))),
  },
  todate: {
    params: [[DataTypeId.TIMEUUID, DataTypeId.TIMESTAMP]],
    returns: date,
    apply: ([v]) => nullOr(v ?? null, (x) => midnight(millisOf(x))),
  },
  tounixtimestamp: {
    params: [[...TIMEUUID, DataTypeId.TIMESTAMP, DataTypeId.DATE]],
    returns: types.bigint,
    apply: ([v]) => nullOr(v ?? null, (x) => BigInt(millisOf(x))),
  },
  tojson: { params: ['any'], returns: types.varchar, apply: ([v], [t]) => toJson(t!, v ?? null) },
};

export const SUPPORTED_FUNCTIONS =
  'now(), currentTimeUUID(), uuid(), currentTimestamp(), currentDate(), currentTime(), toTimestamp(), toDate(), toUnixTimestamp(), toJson()';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A value as Cassandra's toJson writes it. */
export function toJson(type: DataType, value: CellValue): string {
  if (value === null) return 'null';
  switch (type.id) {
    case DataTypeId.ASCII:
    case DataTypeId.VARCHAR:
      return JSON.stringify(value);
    case DataTypeId.UUID:
    case DataTypeId.TIMEUUID:
    case DataTypeId.INET:
      return JSON.stringify(String(value));
    case DataTypeId.INT:
    case DataTypeId.BIGINT:
    case DataTypeId.SMALLINT:
    case DataTypeId.TINYINT:
    case DataTypeId.VARINT:
    case DataTypeId.COUNTER:
    case DataTypeId.BOOLEAN:
    case DataTypeId.FLOAT:
    case DataTypeId.DOUBLE:
      return String(value);
    case DataTypeId.TIMESTAMP:
      return JSON.stringify((value as Date).toISOString().replace('T', ' '));
    case DataTypeId.DATE:
      return JSON.stringify((value as Date).toISOString().slice(0, 10));
    case DataTypeId.TIME: {
      const ns = value as bigint;
      const s = Number(ns / 1_000_000_000n);
      return JSON.stringify(
        `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}.${pad(Number(ns % 1_000_000_000n), 9)}`,
      );
    }
    case DataTypeId.BLOB:
      return JSON.stringify(`0x${(value as Buffer).toString('hex')}`);
    case DataTypeId.LIST:
    case DataTypeId.SET:
      return `[${(value as readonly CellValue[]).map((e) => toJson(type.element, e)).join(', ')}]`;
    case DataTypeId.MAP: {
      const entries = [...(value as ReadonlyMap<CellValue, CellValue>)].map(([k, v]) => {
        const key = toJson(type.key, k);
        return `${key.startsWith('"') ? key : JSON.stringify(key)}: ${toJson(type.value, v)}`;
      });
      return `{${entries.join(', ')}}`;
    }
    default:
      throw new FunctionRefusal(`toJson() of a ${cqlTypeName(type)} value is not supported by the proxy`);
  }
}

/** What a function call reads, checked: its type, its result column name, and how to compute it from a row. */
export interface CompiledCall {
  readonly type: DataType;
  /** The result column's name when the selector has no alias, as Cassandra names it. */
  readonly name: string;
  readonly evaluate: (row: ReadonlyMap<string, CellValue> | undefined) => CellValue;
}

/** Checks `call` against the table's columns (`columnType` throws for an unknown one). */
export function compileCall(call: FunctionCall, columnType: (name: string) => DataType): CompiledCall {
  const f = functions[call.name];
  if (f === undefined) throw new FunctionRefusal(`Unknown function system.${call.name}(); the proxy answers ${SUPPORTED_FUNCTIONS}`);
  if (call.args.length !== f.params.length) {
    throw new FunctionRefusal(
      `Invalid number of arguments in call to function system.${call.name}: ${f.params.length} required but ${call.args.length} provided`,
    );
  }
  const args = call.args.map((a): CompiledCall => {
    if (a.kind === 'call') return compileCall(a.call, columnType);
    return { type: columnType(a.column), name: a.column, evaluate: (row) => row?.get(a.column) ?? null };
  });
  args.forEach((a, i) => {
    const accepted = f.params[i]!;
    if (accepted !== 'any' && !accepted.includes(a.type.id)) {
      throw new FunctionRefusal(
        `Type error: ${a.name} (a ${cqlTypeName(a.type)}) cannot be passed as argument ${i} of function system.${call.name}`,
      );
    }
  });
  const argTypes = args.map((a) => a.type);
  return {
    type: f.returns,
    name: `system.${call.name}(${args.map((a) => a.name).join(', ')})`,
    evaluate: (row) =>
      f.apply(
        args.map((a) => a.evaluate(row)),
        argTypes,
      ),
  };
}
