import { FrameFlag, Opcode, type Frame } from '../protocol/frame.js';

/** RESULT kind 0x0003: [int] kind, then the keyspace as a [string]. */
const SET_KEYSPACE_KIND = 3;
/** A Set_keyspace result is one name long; a compressed body bigger than this is something else. */
const MAX_SET_KEYSPACE_BYTES = 1024;
const EXTRAS = FrameFlag.TRACING | FrameFlag.WARNING | FrameFlag.CUSTOM_PAYLOAD;

/**
 * The keyspace a forwarded answer switched the connection to, or undefined. A `USE` runs as a
 * QUERY or as the EXECUTE of a prepared `USE` (Cassandra answers both Set_keyspace); the proxy must
 * follow both, since it judges unqualified names (`SELECT peer FROM peers`) by the keyspace in use.
 * Cheap on the hot path: the kind is the first int of a plain body; a compressed body is inflated
 * only when it is small enough to be one.
 */
export function keyspaceSet(response: Frame, body: (frame: Frame) => Buffer): string | undefined {
  if (response.opcode !== Opcode.RESULT) return undefined;
  let plain = response.body;
  if (response.flags & (FrameFlag.COMPRESSION | EXTRAS)) {
    if (response.flags & FrameFlag.COMPRESSION && response.body.length > MAX_SET_KEYSPACE_BYTES) return undefined;
    try {
      plain = body(response);
    } catch {
      return undefined;
    }
  }
  if (plain.length < 6 || plain.readInt32BE(0) !== SET_KEYSPACE_KIND) return undefined;
  return plain.toString('utf8', 6, 6 + plain.readUInt16BE(4));
}
