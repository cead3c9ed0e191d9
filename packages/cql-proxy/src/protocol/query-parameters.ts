import { encodingError, ProtocolError } from './errors.js';
import type { Reader, Unset } from './reader.js';
import type { Writer } from './writer.js';

/**
 * <query_parameters> of QUERY and EXECUTE (spec §4.1.4). The flags are an [int] from v5 on and a
 * [byte] before; they are derived from which fields are present when encoding.
 */
export const QueryFlag = {
  VALUES: 0x0001,
  SKIP_METADATA: 0x0002,
  PAGE_SIZE: 0x0004,
  WITH_PAGING_STATE: 0x0008,
  WITH_SERIAL_CONSISTENCY: 0x0010,
  WITH_DEFAULT_TIMESTAMP: 0x0020,
  WITH_NAMES_FOR_VALUES: 0x0040,
  WITH_KEYSPACE: 0x0080,
  WITH_NOW_IN_SECONDS: 0x0100,
} as const;

const V4_FLAGS = 0x7f;
const V5_FLAGS = 0x1ff;

export type BoundValue = Buffer | null | Unset;

export interface QueryParameters {
  readonly consistency: number;
  /** Bound values, in marker order (or paired with {@link valueNames}). */
  readonly values?: readonly BoundValue[];
  /** Marker names, one per value, when the client bound by name (flag 0x40). */
  readonly valueNames?: readonly string[];
  readonly skipMetadata?: boolean;
  readonly pageSize?: number;
  readonly pagingState?: Buffer | null;
  readonly serialConsistency?: number;
  /** Default timestamp in microseconds. */
  readonly timestamp?: bigint;
  /** v5: the keyspace the statement runs in, overriding the connection's. */
  readonly keyspace?: string;
  /** v5: the "now" for TTL and tombstone computation, in seconds. */
  readonly nowInSeconds?: number;
}

export function readFlags(reader: Reader, version: number): number {
  return version >= 5 ? reader.readInt() : reader.readByte();
}

export function writeFlags(writer: Writer, version: number, flags: number): void {
  if (version >= 5) writer.writeInt(flags);
  else writer.writeByte(flags);
}

export function readQueryParameters(reader: Reader, version: number): QueryParameters {
  const consistency = reader.readConsistency();
  const flags = readFlags(reader, version);
  const known = version >= 5 ? V5_FLAGS : V4_FLAGS;
  if ((flags & ~known) !== 0) {
    // Unknown bits may announce fields we would then misread; refuse rather than guess.
    throw new ProtocolError(`Unknown query flags 0x${(flags & ~known).toString(16)} for protocol v${version}`);
  }
  const has = (flag: number) => (flags & flag) !== 0;
  const out: { -readonly [K in keyof QueryParameters]: QueryParameters[K] } = { consistency };
  if (has(QueryFlag.VALUES)) {
    const n = reader.readShort();
    const values: BoundValue[] = [];
    const names: string[] = [];
    for (let i = 0; i < n; i++) {
      if (has(QueryFlag.WITH_NAMES_FOR_VALUES)) names.push(reader.readString());
      values.push(reader.readValue());
    }
    out.values = values;
    if (has(QueryFlag.WITH_NAMES_FOR_VALUES)) out.valueNames = names;
  }
  if (has(QueryFlag.SKIP_METADATA)) out.skipMetadata = true;
  if (has(QueryFlag.PAGE_SIZE)) out.pageSize = reader.readInt();
  if (has(QueryFlag.WITH_PAGING_STATE)) out.pagingState = reader.readBytes();
  if (has(QueryFlag.WITH_SERIAL_CONSISTENCY)) out.serialConsistency = reader.readConsistency();
  if (has(QueryFlag.WITH_DEFAULT_TIMESTAMP)) out.timestamp = reader.readLong();
  if (has(QueryFlag.WITH_KEYSPACE)) out.keyspace = reader.readString();
  if (has(QueryFlag.WITH_NOW_IN_SECONDS)) out.nowInSeconds = reader.readInt();
  return out;
}

export function writeQueryParameters(writer: Writer, version: number, p: QueryParameters): void {
  if (version < 5 && (p.keyspace !== undefined || p.nowInSeconds !== undefined)) {
    throw encodingError(`keyspace and now_in_seconds need protocol v5, not v${version}`);
  }
  if (p.valueNames && p.valueNames.length !== (p.values?.length ?? 0)) {
    throw encodingError(`${p.valueNames.length} value names for ${p.values?.length ?? 0} values`);
  }
  let flags = 0;
  if (p.values) flags |= QueryFlag.VALUES;
  if (p.valueNames) flags |= QueryFlag.WITH_NAMES_FOR_VALUES;
  if (p.skipMetadata) flags |= QueryFlag.SKIP_METADATA;
  if (p.pageSize !== undefined) flags |= QueryFlag.PAGE_SIZE;
  if (p.pagingState !== undefined) flags |= QueryFlag.WITH_PAGING_STATE;
  if (p.serialConsistency !== undefined) flags |= QueryFlag.WITH_SERIAL_CONSISTENCY;
  if (p.timestamp !== undefined) flags |= QueryFlag.WITH_DEFAULT_TIMESTAMP;
  if (p.keyspace !== undefined) flags |= QueryFlag.WITH_KEYSPACE;
  if (p.nowInSeconds !== undefined) flags |= QueryFlag.WITH_NOW_IN_SECONDS;
  writer.writeConsistency(p.consistency);
  writeFlags(writer, version, flags);
  if (p.values) {
    writer.writeShort(p.values.length);
    p.values.forEach((v, i) => {
      const name = p.valueNames?.[i];
      if (name !== undefined) writer.writeString(name);
      writer.writeValue(v);
    });
  }
  if (p.pageSize !== undefined) writer.writeInt(p.pageSize);
  if (p.pagingState !== undefined) writer.writeBytes(p.pagingState);
  if (p.serialConsistency !== undefined) writer.writeConsistency(p.serialConsistency);
  if (p.timestamp !== undefined) writer.writeLong(p.timestamp);
  if (p.keyspace !== undefined) writer.writeString(p.keyspace);
  if (p.nowInSeconds !== undefined) writer.writeInt(p.nowInSeconds);
}
