import { ProtocolError } from './errors.js';
import type { Reader } from './reader.js';

/**
 * Statements longer than this are not decoded to be classified: a system-table SELECT is a few
 * hundred bytes, and decoding a 16 MiB INSERT into a string (to learn it is not one) costs more
 * than forwarding it.
 */
export const CLASSIFIED_STATEMENT_BYTES = 64 * 1024;

export interface Statement {
  /** The statement, or its first {@link limit} bytes when it is longer. */
  readonly text: string;
  readonly complete: boolean;
  readonly limit: number;
}

/** Reads a QUERY's or PREPARE's [long string] statement, decoding at most `limit` bytes of it. */
export function readStatement(reader: Reader, limit = CLASSIFIED_STATEMENT_BYTES): Statement {
  const at = reader.position;
  const n = reader.readInt();
  if (n < 0) throw new ProtocolError(`Negative statement length ${n} at offset ${at}`);
  const bytes = reader.readRaw(n, 'statement [long string]');
  return n <= limit
    ? { text: bytes.toString('utf8'), complete: true, limit }
    : { text: bytes.toString('utf8', 0, limit), complete: false, limit };
}
