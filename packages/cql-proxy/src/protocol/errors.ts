/**
 * Errors of the native protocol layer. A {@link ProtocolError} carries the CQL error code the peer
 * should be answered with (spec §9, "Error codes"), so the connection layer can turn any decoding
 * failure into an ERROR message without guessing. It is recognised across duplicate copies of this
 * package by a `Symbol.for` brand, like Muster's other errors.
 */
const brand = Symbol.for('muster.cql.protocol-error');

/** CQL error codes (spec §9). Only the names; code-specific bodies live in `error-message.ts`. */
export const ErrorCode = {
  SERVER_ERROR: 0x0000,
  PROTOCOL_ERROR: 0x000a,
  AUTHENTICATION_ERROR: 0x0100,
  UNAVAILABLE: 0x1000,
  OVERLOADED: 0x1001,
  IS_BOOTSTRAPPING: 0x1002,
  TRUNCATE_ERROR: 0x1003,
  WRITE_TIMEOUT: 0x1100,
  READ_TIMEOUT: 0x1200,
  READ_FAILURE: 0x1300,
  FUNCTION_FAILURE: 0x1400,
  WRITE_FAILURE: 0x1500,
  CDC_WRITE_FAILURE: 0x1600,
  CAS_WRITE_UNKNOWN: 0x1700,
  SYNTAX_ERROR: 0x2000,
  UNAUTHORIZED: 0x2100,
  INVALID: 0x2200,
  CONFIG_ERROR: 0x2300,
  ALREADY_EXISTS: 0x2400,
  UNPREPARED: 0x2500,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * Bytes that do not follow the protocol: truncated or malformed bodies, oversized frames, bad CRCs,
 * unknown versions. `code` is the CQL error code to answer with (PROTOCOL_ERROR unless stated).
 * After a framing error (anything thrown by a decoder) the byte stream cannot be resynchronised and
 * the connection should be closed once the error has been sent.
 */
export class ProtocolError extends Error {
  readonly code: ErrorCode;
  readonly [brand] = true;

  constructor(message: string, options?: { code?: ErrorCode; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code ?? ErrorCode.PROTOCOL_ERROR;
    this.name = new.target.name;
  }

  /** True for any ProtocolError, even from another copy of this package. */
  static is(value: unknown): value is ProtocolError {
    return typeof value === 'object' && value !== null && (value as { [brand]?: unknown })[brand] === true;
  }
}

/**
 * A frame whose version byte names a protocol version this codec does not decode. `stream` is the
 * request's stream id as read with that version's header layout, so a reply can be addressed.
 */
export class UnsupportedVersionError extends ProtocolError {
  readonly version: number;
  readonly stream: number;

  constructor(version: number, stream: number, message: string) {
    super(message);
    this.version = version;
    this.stream = stream;
  }
}

/**
 * A frame header announcing a body longer than allowed (or negative). Carries the header's version
 * and stream so the refusal can be addressed to the request before the connection is closed.
 */
export class FrameTooLargeError extends ProtocolError {
  readonly version: number;
  readonly stream: number;
  readonly length: number;

  constructor(version: number, stream: number, length: number, message: string) {
    super(message);
    this.version = version;
    this.stream = stream;
    this.length = length;
  }
}

/** A value this side was asked to encode that the protocol cannot carry: our bug, answered as SERVER_ERROR. */
export function encodingError(message: string): ProtocolError {
  return new ProtocolError(message, { code: ErrorCode.SERVER_ERROR });
}
