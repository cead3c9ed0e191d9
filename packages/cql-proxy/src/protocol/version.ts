import { encodeError } from './error-message.js';
import { ErrorCode } from './errors.js';
import { encodeFrameHeader, Opcode, RESPONSE_BIT } from './frame.js';

/**
 * Protocol version negotiation (DESIGN §2.4). A client opens with the highest version it knows
 * (cassandra-driver: 0x42, DSE v2; the Java driver: 5 or 6) and steps down when answered with a
 * PROTOCOL_ERROR whose message contains "Invalid or unsupported protocol version". Drivers read the
 * version of that reply's header as the server's suggestion, so the reply must be in a version the
 * client can parse: the highest we support below its own, or, for a client older than anything we
 * support, its own (v1/v2 use an 8-byte header with a one-byte stream).
 *
 * v5 is a released version: it is accepted with or without the USE_BETA flag.
 */
export const SUPPORTED_VERSIONS: readonly number[] = [3, 4, 5];

export const UNSUPPORTED_VERSION_MESSAGE = 'Invalid or unsupported protocol version';

export function isSupportedVersion(version: number, supported: readonly number[] = SUPPORTED_VERSIONS): boolean {
  return supported.includes(version);
}

/** The PROTOCOL_VERSIONS entries of SUPPORTED ("3/v3", ...). */
export function describeVersions(supported: readonly number[] = SUPPORTED_VERSIONS): string[] {
  return [...supported].sort((a, b) => a - b).map((v) => `${v}/v${v}`);
}

/** The version to answer a client that asked for `requested`, which is not in `supported`. */
export function replyVersion(requested: number, supported: readonly number[] = SUPPORTED_VERSIONS): number {
  const below = supported.filter((v) => v < requested);
  return below.length > 0 ? Math.max(...below) : requested;
}

/**
 * The whole frame answering an unsupported version: ERROR PROTOCOL_ERROR "Invalid or unsupported
 * protocol version (N); supported versions are (3/v3, 4/v4, 5/v5)", unframed (never a v5 segment:
 * no STARTUP has succeeded), on `stream` — 0 unless the request's stream is known, as Cassandra does.
 */
export function unsupportedVersionReply(requested: number, stream = 0, supported: readonly number[] = SUPPORTED_VERSIONS): Buffer {
  const version = replyVersion(requested, supported);
  const body = encodeError({
    code: ErrorCode.PROTOCOL_ERROR,
    message: `${UNSUPPORTED_VERSION_MESSAGE} (${requested}); supported versions are (${describeVersions(supported).join(', ')})`,
  });
  if (version >= 3) {
    const header = encodeFrameHeader({ version, response: true, flags: 0, stream, opcode: Opcode.ERROR }, body.length);
    return Buffer.concat([header, body]);
  }
  const header = Buffer.alloc(8);
  header.writeUInt8(version | RESPONSE_BIT, 0);
  header.writeInt8(Math.max(-128, Math.min(127, stream)), 2);
  header.writeUInt8(Opcode.ERROR, 3);
  header.writeInt32BE(body.length, 4);
  return Buffer.concat([header, body]);
}

/** Whether an ERROR from a backend refuses the version we opened with. */
export function refusesVersion(error: { readonly code: number; readonly message: string }): boolean {
  return error.code === ErrorCode.PROTOCOL_ERROR && error.message.includes(UNSUPPORTED_VERSION_MESSAGE);
}

/**
 * The next version to try with a backend that refused `attempted` in a reply of version `replied`:
 * the backend's suggestion when we support it and it is lower, else our next lower version;
 * undefined when nothing lower is left.
 */
export function nextVersionDown(
  attempted: number,
  replied: number | undefined,
  supported: readonly number[] = SUPPORTED_VERSIONS,
): number | undefined {
  if (replied !== undefined && replied < attempted && supported.includes(replied)) return replied;
  const below = supported.filter((v) => v < attempted);
  return below.length > 0 ? Math.max(...below) : undefined;
}
