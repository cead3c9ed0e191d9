import { ProtocolError } from './errors.js';
import { Opcode } from './frame.js';
import { QueryFlag, readFlags } from './query-parameters.js';
import { Reader } from './reader.js';

/**
 * Checks that a request body the proxy forwards holds what its lengths announce, without decoding
 * it: every length is bounds-checked and stepped over, nothing is copied, viewed or converted (it
 * runs on every request: bench/proxy/request-check.mjs measures it). Throws {@link ProtocolError} naming the
 * field and offset, which the client gets as PROTOCOL_ERROR on its stream.
 *
 * Why the proxy must do this and not leave it to the node: Cassandra 5.0 reads a bound value
 * (CBUtil.readBoundValue, readValue → readRawBytes) by allocating a byte array of the declared
 * length *before* checking that the body holds that many bytes. A 30-byte QUERY that declares a
 * 2 GiB value makes the node throw OutOfMemoryError, and Cassandra's JVMStabilityInspector treats
 * any OutOfMemoryError as fatal: the node dies. The same holds for values in EXECUTE, BATCH, the
 * custom payload map (read by requestMessage before this check) and AUTH_RESPONSE's token.
 *
 * `body` is the request's message: decompressed and past any custom payload (request-message.ts).
 */
export function checkForwardedRequest(opcode: number, body: Buffer, version: number): void {
  const r = new Reader(body);
  switch (opcode) {
    case Opcode.QUERY:
      skipLongString(r, 'query');
      return skipQueryParameters(r, version);
    case Opcode.EXECUTE:
      skipShortBytes(r);
      if (version >= 5) skipShortBytes(r);
      return skipQueryParameters(r, version);
    case Opcode.PREPARE:
      skipLongString(r, 'query');
      if (version >= 5 && (r.readInt() & 0x01) !== 0) skipString(r);
      return;
    case Opcode.BATCH:
      return skipBatch(r, version);
    case Opcode.AUTH_RESPONSE:
      skipBytes(r);
      return;
    default:
      return;
  }
}

function skipString(r: Reader): void {
  r.skip(r.readShort(), '[string]');
}

function skipShortBytes(r: Reader): void {
  r.skip(r.readShort(), '[short bytes]');
}

function skipBytes(r: Reader): void {
  const n = r.readInt();
  if (n >= 0) r.skip(n, '[bytes]');
}

function skipLongString(r: Reader, what: string): void {
  const n = r.readInt();
  if (n < 0) throw new ProtocolError(`Negative ${what} [long string] length ${n} at offset ${r.position - 4}`);
  r.skip(n, `${what} [long string]`);
}

/** A [value]: -1 (null) and -2 (not set) carry no bytes; other negative lengths are refused. */
function skipValue(r: Reader): void {
  const n = r.readInt();
  if (n >= 0) r.skip(n, '[value]');
  else if (n !== -1 && n !== -2) throw new ProtocolError(`Invalid [value] length ${n} at offset ${r.position - 4}`);
}

function skipValues(r: Reader, withNames: boolean): void {
  const n = r.readShort();
  for (let i = 0; i < n; i++) {
    if (withNames) skipString(r);
    skipValue(r);
  }
}

function skipQueryParameters(r: Reader, version: number): void {
  r.readConsistency();
  const flags = readFlags(r, version);
  const has = (flag: number) => (flags & flag) !== 0;
  if (has(QueryFlag.VALUES)) skipValues(r, has(QueryFlag.WITH_NAMES_FOR_VALUES));
  if (has(QueryFlag.PAGE_SIZE)) r.readInt();
  if (has(QueryFlag.WITH_PAGING_STATE)) skipBytes(r);
  if (has(QueryFlag.WITH_SERIAL_CONSISTENCY)) r.readConsistency();
  if (has(QueryFlag.WITH_DEFAULT_TIMESTAMP)) r.skip(8, '[long]'); // readLong would make a bigint
  if (version >= 5 && has(QueryFlag.WITH_KEYSPACE)) skipString(r);
  if (version >= 5 && has(QueryFlag.WITH_NOW_IN_SECONDS)) r.readInt();
}

function skipBatch(r: Reader, version: number): void {
  r.readByte();
  const n = r.readShort();
  for (let i = 0; i < n; i++) {
    const kind = r.readByte();
    if (kind === 0) skipLongString(r, 'BATCH statement');
    else if (kind === 1) skipShortBytes(r);
    else throw new ProtocolError(`Invalid BATCH statement kind ${kind} at offset ${r.position - 1}`);
    skipValues(r, false);
  }
  r.readConsistency();
  const flags = readFlags(r, version);
  if (flags & QueryFlag.WITH_SERIAL_CONSISTENCY) r.readConsistency();
  if (flags & QueryFlag.WITH_DEFAULT_TIMESTAMP) r.skip(8, '[long]');
  if (version >= 5 && flags & QueryFlag.WITH_KEYSPACE) skipString(r);
  if (version >= 5 && flags & QueryFlag.WITH_NOW_IN_SECONDS) r.readInt();
}
