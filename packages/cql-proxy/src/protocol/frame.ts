import { ByteQueue } from './byte-queue.js';
import { FrameTooLargeError, ProtocolError, UnsupportedVersionError } from './errors.js';

/**
 * Frames (v5: "envelopes"), spec §1–2: a 9-byte header — version byte whose top bit is the
 * direction, flags, [short] stream as a signed int16, opcode, [int] body length — then the body.
 */

export const Opcode = {
  ERROR: 0x00,
  STARTUP: 0x01,
  READY: 0x02,
  AUTHENTICATE: 0x03,
  OPTIONS: 0x05,
  SUPPORTED: 0x06,
  QUERY: 0x07,
  RESULT: 0x08,
  PREPARE: 0x09,
  EXECUTE: 0x0a,
  REGISTER: 0x0b,
  EVENT: 0x0c,
  BATCH: 0x0d,
  AUTH_CHALLENGE: 0x0e,
  AUTH_RESPONSE: 0x0f,
  AUTH_SUCCESS: 0x10,
} as const;
export type Opcode = (typeof Opcode)[keyof typeof Opcode];

const opcodes = new Set<number>(Object.values(Opcode));

export function isOpcode(value: number): value is Opcode {
  return opcodes.has(value);
}

/** Header flags (spec §2.2). COMPRESSION is ignored in v5, where segments compress. */
export const FrameFlag = {
  COMPRESSION: 0x01,
  TRACING: 0x02,
  CUSTOM_PAYLOAD: 0x04,
  WARNING: 0x08,
  USE_BETA: 0x10,
} as const;

export const HEADER_LENGTH = 9;
/** The direction bit of the version byte: set on responses. */
export const RESPONSE_BIT = 0x80;
/** The spec's own limit on a body ("currently a frame is limited to 256MB"). */
export const MAX_BODY_LENGTH = 256 * 1024 * 1024;

export interface FrameHeader {
  /** Protocol version, without the direction bit. */
  readonly version: number;
  readonly response: boolean;
  readonly flags: number;
  /** Signed: negative ids are server-initiated (EVENT uses -1). */
  readonly stream: number;
  readonly opcode: number;
}

export interface Frame extends FrameHeader {
  readonly body: Buffer;
}

export function encodeFrameHeader(header: FrameHeader, bodyLength: number): Buffer {
  const out = Buffer.allocUnsafe(HEADER_LENGTH);
  out.writeUInt8((header.version & 0x7f) | (header.response ? RESPONSE_BIT : 0), 0);
  out.writeUInt8(header.flags, 1);
  out.writeInt16BE(header.stream, 2);
  out.writeUInt8(header.opcode, 4);
  out.writeInt32BE(bodyLength, 5);
  return out;
}

export function encodeFrame(frame: Frame): Buffer {
  return Buffer.concat([encodeFrameHeader(frame, frame.body.length), frame.body]);
}

/**
 * Reads a header from the first 9 bytes of `bytes`. Versions 1 and 2 used an 8-byte header with a
 * one-byte stream; they are reported as {@link UnsupportedVersionError} with that stream, read from
 * the first 3 bytes, so the caller can answer in a form the peer reads.
 */
export function decodeFrameHeader(bytes: Buffer): FrameHeader & { readonly length: number } {
  const versionByte = bytes.readUInt8(0);
  const version = versionByte & 0x7f;
  if (version < 3) {
    throw new UnsupportedVersionError(version, bytes.readInt8(2), `Protocol version ${version} is not supported`);
  }
  return {
    version,
    response: (versionByte & RESPONSE_BIT) !== 0,
    flags: bytes.readUInt8(1),
    stream: bytes.readInt16BE(2),
    opcode: bytes.readUInt8(4),
    length: bytes.readInt32BE(5),
  };
}

export interface FrameDecoderOptions {
  /** Largest body accepted; a header announcing more is an error. Default {@link MAX_BODY_LENGTH}. */
  readonly maxBodyLength?: number;
}

/**
 * Turns a byte stream cut into arbitrary chunks into whole frames. Bodies are views into the
 * received chunks when a frame arrived in one chunk, and a single copy when it spanned several.
 * Buffering is bounded: a header announcing a body over `maxBodyLength` (or a negative one) throws
 * before the body is waited for. After any throw the decoder is failed and throws again on every
 * push — a stream that lost framing cannot be resynchronised.
 */
export class FrameDecoder {
  private readonly queue = new ByteQueue();
  private readonly maxBodyLength: number;
  /** The body length the header at the front of the queue announced, once vetted; -1 before. */
  private bodyLength = -1;
  private failure: ProtocolError | undefined;

  constructor(options: FrameDecoderOptions = {}) {
    this.maxBodyLength = options.maxBodyLength ?? MAX_BODY_LENGTH;
  }

  /** Bytes received that are not part of a returned frame yet. */
  get buffered(): number {
    return this.queue.length;
  }

  /**
   * Removes and returns the bytes received after the last whole frame. For the v5 switch: bytes a
   * client sent right behind its STARTUP already belong to segments, so they move to the
   * {@link SegmentedFrameDecoder} that takes over.
   */
  takeBuffered(): Buffer {
    this.bodyLength = -1;
    return this.queue.take(this.queue.length);
  }

  /**
   * The header's fields are read byte by byte from the front of the queue, where they stay until
   * the whole frame is in: no view and no header object per frame, only the frame itself.
   */
  push(chunk: Buffer): Frame[] {
    if (this.failure) throw this.failure;
    const q = this.queue;
    q.push(chunk);
    const frames: Frame[] = [];
    try {
      for (;;) {
        if (this.bodyLength < 0) {
          if (q.length >= 3 && (q.byteAt(0) & 0x7f) < 3) decodeFrameHeader(q.peek(3));
          if (q.length < HEADER_LENGTH) break;
          const length = (q.byteAt(5) << 24) | (q.byteAt(6) << 16) | (q.byteAt(7) << 8) | q.byteAt(8) | 0;
          if (length < 0 || length > this.maxBodyLength) {
            const stream = (((q.byteAt(2) << 8) | q.byteAt(3)) << 16) >> 16;
            const opcode = q.byteAt(4);
            throw new FrameTooLargeError(
              q.byteAt(0) & 0x7f,
              stream,
              length,
              `Frame body length ${length} (opcode 0x${opcode.toString(16)}, stream ${stream}) is outside 0..${this.maxBodyLength}`,
            );
          }
          this.bodyLength = length;
        }
        if (q.length < HEADER_LENGTH + this.bodyLength) break;
        const versionByte = q.byteAt(0);
        const flags = q.byteAt(1);
        const stream = (((q.byteAt(2) << 8) | q.byteAt(3)) << 16) >> 16;
        const opcode = q.byteAt(4);
        q.skip(HEADER_LENGTH);
        const body = q.take(this.bodyLength);
        frames.push({ version: versionByte & 0x7f, response: (versionByte & RESPONSE_BIT) !== 0, flags, stream, opcode, body });
        this.bodyLength = -1;
      }
    } catch (err) {
      this.failure = ProtocolError.is(err) ? err : new ProtocolError('Undecodable frame', { cause: err });
      throw this.failure;
    }
    return frames;
  }
}
