import { ByteQueue } from './byte-queue.js';
import { crc24, crc32 } from './crc.js';
import { encodingError, ProtocolError } from './errors.js';
import { FrameDecoder, type Frame, type FrameDecoderOptions } from './frame.js';
import { lz4CompressBlock, lz4DecompressBlock } from './lz4.js';

/**
 * v5 segments (spec v5 §2, where they are called frames and frames "envelopes"). After the
 * STARTUP exchange every byte travels in segments:
 *
 *   uncompressed: 3-byte LE header {payload length:17, self-contained:1, pad:6}, 3-byte LE CRC24
 *                 of the header, payload, 4-byte LE CRC32 of the payload;
 *   lz4:          5-byte LE header {compressed length:17, uncompressed length:17,
 *                 self-contained:1, pad:5}, 3-byte LE CRC24, payload, CRC32 of the compressed
 *                 payload. Uncompressed length 0 means the payload was sent uncompressed.
 *
 * A self-contained segment holds one or more whole envelopes; an envelope larger than a segment is
 * split across consecutive segments that are not self-contained.
 */
export const MAX_SEGMENT_PAYLOAD = 0x1ffff;

export interface Segment {
  readonly payload: Buffer;
  readonly selfContained: boolean;
}

export interface SegmentOptions {
  /** LZ4-compressed segments, when STARTUP negotiated COMPRESSION=lz4. */
  readonly lz4?: boolean;
}

const TRAILER_LENGTH = 4;
const headerLength = (lz4: boolean) => (lz4 ? 8 : 6);

function writeLE(out: Buffer, at: number, value: number, bytes: number): void {
  for (let i = 0; i < bytes; i++) out[at + i] = Math.floor(value / 2 ** (8 * i)) & 0xff;
}

function readLE(bytes: Buffer, at: number, n: number): number {
  let v = 0;
  for (let i = n - 1; i >= 0; i--) v = v * 256 + (bytes[at + i] as number);
  return v;
}

/** A segment header with its CRC24; `uncompressedLength` only with lz4 (0: payload not compressed). */
export function encodeSegmentHeader(lz4: boolean, length: number, uncompressedLength: number, selfContained: boolean): Buffer {
  const n = lz4 ? 5 : 3;
  const value = lz4 ? length + uncompressedLength * 2 ** 17 + (selfContained ? 2 ** 34 : 0) : length + (selfContained ? 2 ** 17 : 0);
  const out = Buffer.alloc(n + 3);
  writeLE(out, 0, value, n);
  writeLE(out, n, crc24(out.subarray(0, n)), 3);
  return out;
}

function trailer(...parts: readonly Uint8Array[]): Buffer {
  const out = Buffer.alloc(TRAILER_LENGTH);
  out.writeUInt32LE(crc32(...parts), 0);
  return out;
}

/**
 * One segment as wire pieces (header, payload parts, trailer), ready for a vectored write. With
 * lz4 the payload is compressed unless that would not make it smaller.
 */
export function encodeSegment(parts: readonly Buffer[], selfContained: boolean, options: SegmentOptions = {}): Buffer[] {
  const length = parts.reduce((n, p) => n + p.length, 0);
  if (length > MAX_SEGMENT_PAYLOAD) throw encodingError(`A segment payload holds at most ${MAX_SEGMENT_PAYLOAD} bytes, not ${length}`);
  if (options.lz4 && length > 0) {
    const plain = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, length);
    const compressed = lz4CompressBlock(plain);
    if (compressed.length < length) {
      return [encodeSegmentHeader(true, compressed.length, length, selfContained), compressed, trailer(compressed)];
    }
    return [encodeSegmentHeader(true, length, 0, selfContained), plain, trailer(plain)];
  }
  return [encodeSegmentHeader(options.lz4 === true, length, 0, selfContained), ...parts, trailer(...parts)];
}

/**
 * Packs encoded envelopes into segments: consecutive envelopes share self-contained segments up to
 * the payload limit, and an envelope over the limit is cut across non-self-contained ones.
 */
export function encodeSegments(envelopes: readonly Buffer[], options: SegmentOptions = {}): Buffer[] {
  const out: Buffer[] = [];
  let batch: Buffer[] = [];
  let batchLength = 0;
  const flush = () => {
    if (batch.length > 0) out.push(...encodeSegment(batch, true, options));
    batch = [];
    batchLength = 0;
  };
  for (const envelope of envelopes) {
    if (envelope.length > MAX_SEGMENT_PAYLOAD) {
      flush();
      for (let at = 0; at < envelope.length; at += MAX_SEGMENT_PAYLOAD) {
        out.push(...encodeSegment([envelope.subarray(at, at + MAX_SEGMENT_PAYLOAD)], false, options));
      }
      continue;
    }
    if (batchLength + envelope.length > MAX_SEGMENT_PAYLOAD) flush();
    batch.push(envelope);
    batchLength += envelope.length;
  }
  flush();
  return out;
}

/**
 * Turns a byte stream in arbitrary chunks into verified segments. A header CRC mismatch, a payload
 * CRC mismatch or a corrupt LZ4 payload throws {@link ProtocolError}, and the decoder stays failed:
 * the spec gives no way to find the next segment boundary after corruption.
 */
export class SegmentDecoder {
  private readonly queue = new ByteQueue();
  private readonly lz4: boolean;
  private header: { length: number; uncompressedLength: number; selfContained: boolean } | undefined;
  private failure: ProtocolError | undefined;

  constructor(options: SegmentOptions = {}) {
    this.lz4 = options.lz4 === true;
  }

  get buffered(): number {
    return this.queue.length;
  }

  push(chunk: Buffer): Segment[] {
    if (this.failure) throw this.failure;
    this.queue.push(chunk);
    const segments: Segment[] = [];
    try {
      for (;;) {
        if (!this.header) {
          if (this.queue.length < headerLength(this.lz4)) break;
          this.header = this.readHeader(this.queue.take(headerLength(this.lz4)));
        }
        const { length, uncompressedLength, selfContained } = this.header;
        if (this.queue.length < length + TRAILER_LENGTH) break;
        const payload = this.queue.take(length);
        const expected = this.queue.take(TRAILER_LENGTH).readUInt32LE(0);
        const actual = crc32(payload);
        if (actual !== expected) {
          throw new ProtocolError(`Segment payload CRC32 mismatch: read 0x${expected.toString(16)}, computed 0x${actual.toString(16)}`);
        }
        segments.push({ payload: uncompressedLength > 0 ? lz4DecompressBlock(payload, uncompressedLength) : payload, selfContained });
        this.header = undefined;
      }
    } catch (err) {
      this.failure = ProtocolError.is(err) ? err : new ProtocolError('Undecodable segment', { cause: err });
      throw this.failure;
    }
    return segments;
  }

  private readHeader(bytes: Buffer) {
    const n = this.lz4 ? 5 : 3;
    const value = readLE(bytes, 0, n);
    const expected = readLE(bytes, n, 3);
    const actual = crc24(bytes.subarray(0, n));
    if (actual !== expected) {
      throw new ProtocolError(`Segment header CRC24 mismatch: read 0x${expected.toString(16)}, computed 0x${actual.toString(16)}`);
    }
    const length = value % 2 ** 17;
    if (!this.lz4) return { length, uncompressedLength: 0, selfContained: Math.floor(value / 2 ** 17) % 2 === 1 };
    return {
      length,
      uncompressedLength: Math.floor(value / 2 ** 17) % 2 ** 17,
      selfContained: Math.floor(value / 2 ** 34) % 2 === 1,
    };
  }
}

/**
 * Frames from a v5 byte stream: segments, then envelopes inside them. A self-contained segment must
 * start and end on envelope boundaries; envelopes split across segments are reassembled, bounded by
 * the frame decoder's maximum body length.
 */
export class SegmentedFrameDecoder {
  private readonly segments: SegmentDecoder;
  private readonly frames: FrameDecoder;
  private failure: ProtocolError | undefined;

  constructor(options: SegmentOptions & FrameDecoderOptions = {}) {
    this.segments = new SegmentDecoder(options);
    this.frames = new FrameDecoder(options);
  }

  /** Bytes received and not returned in a frame yet: a partial segment plus a partial envelope. */
  get buffered(): number {
    return this.segments.buffered + this.frames.buffered;
  }

  push(chunk: Buffer): Frame[] {
    if (this.failure) throw this.failure;
    const out: Frame[] = [];
    for (const segment of this.segments.push(chunk)) {
      if (segment.selfContained && this.frames.buffered > 0) {
        throw (this.failure = new ProtocolError('A self-contained segment arrived in the middle of a split envelope'));
      }
      out.push(...this.frames.push(segment.payload));
      if (segment.selfContained && this.frames.buffered > 0) {
        throw (this.failure = new ProtocolError('A self-contained segment ended inside an envelope'));
      }
    }
    return out;
  }
}
