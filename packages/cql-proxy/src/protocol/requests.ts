import { encodingError, ProtocolError } from './errors.js';
import {
  readFlags,
  readQueryParameters,
  writeFlags,
  writeQueryParameters,
  type BoundValue,
  type QueryParameters,
} from './query-parameters.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';

/** Request bodies (spec §4.1), each with a decoder and an encoder for a given protocol version. */

/** STARTUP option keys (spec v5 §4.1.1); SUPPORTED lists accepted values under the same keys. */
export const StartupOption = {
  CQL_VERSION: 'CQL_VERSION',
  COMPRESSION: 'COMPRESSION',
  DRIVER_NAME: 'DRIVER_NAME',
  DRIVER_VERSION: 'DRIVER_VERSION',
  THROW_ON_OVERLOAD: 'THROW_ON_OVERLOAD',
  NO_COMPACT: 'NO_COMPACT',
  /** SUPPORTED only: "3/v3", "4/v4", "5/v5" ... */
  PROTOCOL_VERSIONS: 'PROTOCOL_VERSIONS',
} as const;

/** STARTUP: a [string map] of options (see {@link StartupOption}). */
export interface Startup {
  readonly options: ReadonlyMap<string, string>;
}

export const decodeStartup = (body: Buffer): Startup => ({ options: new Reader(body).readStringMap() });
export const encodeStartup = (m: Startup): Buffer => new Writer().writeStringMap(m.options).finish();

/** REGISTER: the event types to receive. */
export interface Register {
  readonly eventTypes: readonly string[];
}

/**
 * The event types Cassandra's REGISTER accepts, matched without regard to case as it does
 * (TRACE_COMPLETE is in its enum, though never sent).
 */
const EVENT_TYPES = new Set(['TOPOLOGY_CHANGE', 'STATUS_CHANGE', 'SCHEMA_CHANGE', 'TRACE_COMPLETE']);

/**
 * The types in their canonical upper case. An unknown one is a PROTOCOL_ERROR, as on Cassandra:
 * kept, any string a client sends would stay in memory for as long as its connection lasts.
 */
export const decodeRegister = (body: Buffer): Register => {
  const eventTypes = new Reader(body).readStringList().map((type) => {
    const canonical = type.toUpperCase();
    if (!EVENT_TYPES.has(canonical)) {
      throw new ProtocolError(`Invalid value '${type.slice(0, 64)}' for Type; REGISTER accepts ${[...EVENT_TYPES].join(', ')}`);
    }
    return canonical;
  });
  return { eventTypes: [...new Set(eventTypes)] };
};
export const encodeRegister = (m: Register): Buffer => new Writer().writeStringList(m.eventTypes).finish();

/** AUTH_RESPONSE (and, as responses, AUTH_CHALLENGE and AUTH_SUCCESS): one [bytes] token. */
export interface AuthToken {
  readonly token: Buffer | null;
}

export const decodeAuthToken = (body: Buffer): AuthToken => ({ token: new Reader(body).readBytes() });
export const encodeAuthToken = (m: AuthToken): Buffer => new Writer().writeBytes(m.token).finish();

export interface Query {
  readonly query: string;
  readonly parameters: QueryParameters;
}

export function decodeQuery(body: Buffer, version: number): Query {
  const r = new Reader(body);
  const query = r.readLongString();
  return { query, parameters: readQueryParameters(r, version) };
}

export function encodeQuery(m: Query, version: number): Buffer {
  const w = new Writer(64 + m.query.length).writeLongString(m.query);
  writeQueryParameters(w, version, m.parameters);
  return w.finish();
}

/** PREPARE: the query, and from v5 an [int] of flags whose 0x01 adds a keyspace. */
export interface Prepare {
  readonly query: string;
  readonly keyspace?: string;
}

const PREPARE_WITH_KEYSPACE = 0x01;

export function decodePrepare(body: Buffer, version: number): Prepare {
  const r = new Reader(body);
  const query = r.readLongString();
  if (version < 5) return { query };
  const flags = r.readInt();
  return flags & PREPARE_WITH_KEYSPACE ? { query, keyspace: r.readString() } : { query };
}

export function encodePrepare(m: Prepare, version: number): Buffer {
  const w = new Writer(16 + m.query.length).writeLongString(m.query);
  if (version >= 5) {
    w.writeInt(m.keyspace === undefined ? 0 : PREPARE_WITH_KEYSPACE);
    if (m.keyspace !== undefined) w.writeString(m.keyspace);
  } else if (m.keyspace !== undefined) {
    throw encodingError(`PREPARE with a keyspace needs protocol v5, not v${version}`);
  }
  return w.finish();
}

/** EXECUTE: the prepared id, from v5 the result metadata id, then the parameters. */
export interface Execute {
  readonly id: Buffer;
  /** v5 only. */
  readonly resultMetadataId?: Buffer;
  readonly parameters: QueryParameters;
}

export function decodeExecute(body: Buffer, version: number): Execute {
  const r = new Reader(body);
  const id = r.readShortBytes();
  if (version >= 5) {
    const resultMetadataId = r.readShortBytes();
    return { id, resultMetadataId, parameters: readQueryParameters(r, version) };
  }
  return { id, parameters: readQueryParameters(r, version) };
}

export function encodeExecute(m: Execute, version: number): Buffer {
  const w = new Writer().writeShortBytes(m.id);
  if (version >= 5) {
    if (!m.resultMetadataId) throw encodingError('EXECUTE in protocol v5 needs a result metadata id');
    w.writeShortBytes(m.resultMetadataId);
  }
  writeQueryParameters(w, version, m.parameters);
  return w.finish();
}

/** BATCH (spec §4.1.7). Statements are either query strings or prepared ids. */
export const BatchType = { LOGGED: 0, UNLOGGED: 1, COUNTER: 2 } as const;

export type BatchStatement =
  | { readonly kind: 'query'; readonly query: string; readonly values: readonly BoundValue[] }
  | { readonly kind: 'prepared'; readonly id: Buffer; readonly values: readonly BoundValue[] };

export interface Batch {
  readonly type: number;
  readonly statements: readonly BatchStatement[];
  readonly consistency: number;
  readonly serialConsistency?: number;
  readonly timestamp?: bigint;
  readonly keyspace?: string;
  readonly nowInSeconds?: number;
}

const BatchFlag = {
  WITH_SERIAL_CONSISTENCY: 0x0010,
  WITH_DEFAULT_TIMESTAMP: 0x0020,
  WITH_NAMES_FOR_VALUES: 0x0040,
  WITH_KEYSPACE: 0x0080,
  WITH_NOW_IN_SECONDS: 0x0100,
} as const;

export function decodeBatch(body: Buffer, version: number): Batch {
  const r = new Reader(body);
  const type = r.readByte();
  const n = r.readShort();
  const statements: BatchStatement[] = [];
  for (let i = 0; i < n; i++) {
    const kind = r.readByte();
    if (kind !== 0 && kind !== 1) throw new ProtocolError(`Invalid BATCH statement kind ${kind}`);
    const queryOrId = kind === 0 ? r.readLongString() : r.readShortBytes();
    const count = r.readShort();
    const values: BoundValue[] = [];
    for (let j = 0; j < count; j++) values.push(r.readValue());
    statements.push(
      typeof queryOrId === 'string' ? { kind: 'query', query: queryOrId, values } : { kind: 'prepared', id: queryOrId, values },
    );
  }
  const consistency = r.readConsistency();
  const flags = readFlags(r, version);
  if (flags & BatchFlag.WITH_NAMES_FOR_VALUES) {
    // The spec itself says this cannot work (CASSANDRA-10246); names would already have been misread.
    throw new ProtocolError('BATCH with names for values is not supported');
  }
  const out: { -readonly [K in keyof Batch]: Batch[K] } = { type, statements, consistency };
  if (flags & BatchFlag.WITH_SERIAL_CONSISTENCY) out.serialConsistency = r.readConsistency();
  if (flags & BatchFlag.WITH_DEFAULT_TIMESTAMP) out.timestamp = r.readLong();
  if (version >= 5 && flags & BatchFlag.WITH_KEYSPACE) out.keyspace = r.readString();
  if (version >= 5 && flags & BatchFlag.WITH_NOW_IN_SECONDS) out.nowInSeconds = r.readInt();
  return out;
}

export function encodeBatch(m: Batch, version: number): Buffer {
  const w = new Writer().writeByte(m.type).writeShort(m.statements.length);
  for (const s of m.statements) {
    if (s.kind === 'query') w.writeByte(0).writeLongString(s.query);
    else w.writeByte(1).writeShortBytes(s.id);
    w.writeShort(s.values.length);
    for (const v of s.values) w.writeValue(v);
  }
  let flags = 0;
  if (m.serialConsistency !== undefined) flags |= BatchFlag.WITH_SERIAL_CONSISTENCY;
  if (m.timestamp !== undefined) flags |= BatchFlag.WITH_DEFAULT_TIMESTAMP;
  if (m.keyspace !== undefined) flags |= BatchFlag.WITH_KEYSPACE;
  if (m.nowInSeconds !== undefined) flags |= BatchFlag.WITH_NOW_IN_SECONDS;
  if (version < 5 && flags & (BatchFlag.WITH_KEYSPACE | BatchFlag.WITH_NOW_IN_SECONDS)) {
    throw encodingError(`BATCH keyspace and now_in_seconds need protocol v5, not v${version}`);
  }
  w.writeConsistency(m.consistency);
  writeFlags(w, version, flags);
  if (m.serialConsistency !== undefined) w.writeConsistency(m.serialConsistency);
  if (m.timestamp !== undefined) w.writeLong(m.timestamp);
  if (m.keyspace !== undefined) w.writeString(m.keyspace);
  if (m.nowInSeconds !== undefined) w.writeInt(m.nowInSeconds);
  return w.finish();
}
