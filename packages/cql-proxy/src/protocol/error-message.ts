import { encodingError, ErrorCode } from './errors.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';

/**
 * ERROR (spec §4.2.1, codes and bodies in §9): [int] code, [string] message, then a code-specific
 * part. The parts a proxy acts on are decoded into `details`; whatever follows — the rest of other
 * codes' bodies, or bytes a newer server appends — is kept in `trailer`, so decoding then encoding
 * an ERROR gives back the same bytes.
 */
export type ErrorDetails =
  | { readonly code: typeof ErrorCode.UNAVAILABLE; readonly consistency: number; readonly required: number; readonly alive: number }
  | {
      readonly code: typeof ErrorCode.WRITE_TIMEOUT;
      readonly consistency: number;
      readonly received: number;
      readonly blockFor: number;
      readonly writeType: string;
    }
  | {
      readonly code: typeof ErrorCode.READ_TIMEOUT;
      readonly consistency: number;
      readonly received: number;
      readonly blockFor: number;
      readonly dataPresent: boolean;
    }
  | { readonly code: typeof ErrorCode.ALREADY_EXISTS; readonly keyspace: string; readonly table: string }
  | { readonly code: typeof ErrorCode.UNPREPARED; readonly id: Buffer };

export interface ErrorMessage {
  readonly code: number;
  readonly message: string;
  readonly details?: ErrorDetails;
  /** Undecoded bytes after the decoded part; empty for the codes without a body. */
  readonly trailer?: Buffer;
}

function readDetails(code: number, r: Reader): ErrorDetails | undefined {
  switch (code) {
    case ErrorCode.UNAVAILABLE:
      return { code, consistency: r.readConsistency(), required: r.readInt(), alive: r.readInt() };
    case ErrorCode.WRITE_TIMEOUT:
      return { code, consistency: r.readConsistency(), received: r.readInt(), blockFor: r.readInt(), writeType: r.readString() };
    case ErrorCode.READ_TIMEOUT:
      return { code, consistency: r.readConsistency(), received: r.readInt(), blockFor: r.readInt(), dataPresent: r.readByte() !== 0 };
    case ErrorCode.ALREADY_EXISTS:
      return { code, keyspace: r.readString(), table: r.readString() };
    case ErrorCode.UNPREPARED:
      return { code, id: r.readShortBytes() };
    default:
      return undefined;
  }
}

export function decodeError(body: Buffer): ErrorMessage {
  const r = new Reader(body);
  const code = r.readInt();
  const message = r.readString();
  const details = readDetails(code, r);
  const trailer = r.readRest();
  return {
    code,
    message,
    ...(details ? { details } : {}),
    ...(trailer.length > 0 ? { trailer } : {}),
  };
}

export function encodeError(m: ErrorMessage): Buffer {
  const d = m.details;
  if (d && d.code !== m.code) throw encodingError(`ERROR 0x${m.code.toString(16)} with details of 0x${d.code.toString(16)}`);
  const w = new Writer(64).writeInt(m.code).writeString(m.message);
  switch (d?.code) {
    case ErrorCode.UNAVAILABLE:
      w.writeConsistency(d.consistency).writeInt(d.required).writeInt(d.alive);
      break;
    case ErrorCode.WRITE_TIMEOUT:
      w.writeConsistency(d.consistency).writeInt(d.received).writeInt(d.blockFor).writeString(d.writeType);
      break;
    case ErrorCode.READ_TIMEOUT:
      w.writeConsistency(d.consistency)
        .writeInt(d.received)
        .writeInt(d.blockFor)
        .writeByte(d.dataPresent ? 1 : 0);
      break;
    case ErrorCode.ALREADY_EXISTS:
      w.writeString(d.keyspace).writeString(d.table);
      break;
    case ErrorCode.UNPREPARED:
      w.writeShortBytes(d.id);
      break;
    case undefined:
      break;
  }
  if (m.trailer) w.writeRaw(m.trailer);
  return w.finish();
}
