import { ProtocolError } from './errors.js';
import { Reader, type InetAddress } from './reader.js';
import { Writer } from './writer.js';

/**
 * EVENT bodies (spec §4.2.6) and the Schema_change RESULT, which shares SCHEMA_CHANGE's body.
 * v3 knows KEYSPACE, TABLE and TYPE targets; v4 adds FUNCTION and AGGREGATE with their argument
 * types. A v3 client is told of a function or aggregate change as `UPDATED KEYSPACE <keyspace>`,
 * as Cassandra tells it (`Event.SchemaChange.serializeEvent`): a driver refreshes that keyspace's
 * metadata, functions and aggregates included, where a skipped event would leave them stale.
 */
export const EventType = {
  TOPOLOGY_CHANGE: 'TOPOLOGY_CHANGE',
  STATUS_CHANGE: 'STATUS_CHANGE',
  SCHEMA_CHANGE: 'SCHEMA_CHANGE',
} as const;

export type SchemaChange =
  | { readonly change: string; readonly target: 'KEYSPACE'; readonly keyspace: string }
  | { readonly change: string; readonly target: 'TABLE' | 'TYPE'; readonly keyspace: string; readonly name: string }
  | {
      readonly change: string;
      readonly target: 'FUNCTION' | 'AGGREGATE';
      readonly keyspace: string;
      readonly name: string;
      readonly argumentTypes: readonly string[];
    };

export type Event =
  | { readonly type: 'TOPOLOGY_CHANGE'; readonly change: string; readonly address: InetAddress }
  | { readonly type: 'STATUS_CHANGE'; readonly change: string; readonly address: InetAddress }
  | ({ readonly type: 'SCHEMA_CHANGE' } & SchemaChange);

export function readSchemaChange(r: Reader): SchemaChange {
  const change = r.readString();
  const target = r.readString();
  switch (target) {
    case 'KEYSPACE':
      return { change, target, keyspace: r.readString() };
    case 'TABLE':
    case 'TYPE':
      return { change, target, keyspace: r.readString(), name: r.readString() };
    case 'FUNCTION':
    case 'AGGREGATE':
      return { change, target, keyspace: r.readString(), name: r.readString(), argumentTypes: r.readStringList() };
    default:
      throw new ProtocolError(`Unknown schema change target "${target}"`);
  }
}

/** The change as `version` can express it: before v4 a function or aggregate change is its keyspace's update. */
function schemaChangeIn(c: SchemaChange, version: number): SchemaChange {
  if (version >= 4 || (c.target !== 'FUNCTION' && c.target !== 'AGGREGATE')) return c;
  return { change: 'UPDATED', target: 'KEYSPACE', keyspace: c.keyspace };
}

export function writeSchemaChange(w: Writer, change: SchemaChange, version: number): void {
  const c = schemaChangeIn(change, version);
  w.writeString(c.change).writeString(c.target).writeString(c.keyspace);
  if (c.target === 'KEYSPACE') return;
  w.writeString(c.name);
  if (c.target === 'FUNCTION' || c.target === 'AGGREGATE') w.writeStringList(c.argumentTypes);
}

export function decodeEvent(body: Buffer): Event {
  const r = new Reader(body);
  const type = r.readString();
  switch (type) {
    case 'TOPOLOGY_CHANGE':
    case 'STATUS_CHANGE':
      return { type, change: r.readString(), address: r.readInet() };
    case 'SCHEMA_CHANGE':
      return { type, ...readSchemaChange(r) };
    default:
      throw new ProtocolError(`Unknown event type "${type}"`);
  }
}

export function encodeEvent(e: Event, version: number): Buffer {
  const w = new Writer(64).writeString(e.type);
  if (e.type === 'SCHEMA_CHANGE') writeSchemaChange(w, e, version);
  else w.writeString(e.change).writeInet(e.address);
  return w.finish();
}
