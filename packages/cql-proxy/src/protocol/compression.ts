import { ProtocolError } from './errors.js';
import { lz4CompressBlock, lz4DecompressBlock } from './lz4.js';
import { snappyCompress, snappyDecompress } from './snappy.js';

/**
 * Frame-body compression for protocol v3/v4 (spec v4 §5), chosen by STARTUP's COMPRESSION option:
 *   lz4    — [int] uncompressed length, big-endian, then one LZ4 block;
 *   snappy — raw Snappy (no stream framing).
 * v5 compresses segments instead (see `segment.ts`). Decompression is bounded by `maxLength`, so a
 * peer cannot make us allocate more than a frame may hold.
 */
export interface FrameCompression {
  readonly name: 'lz4' | 'snappy';
  compress(body: Buffer): Buffer;
  decompress(body: Buffer, maxLength: number): Buffer;
}

export const lz4: FrameCompression = {
  name: 'lz4',
  compress(body) {
    const block = lz4CompressBlock(body);
    const out = Buffer.allocUnsafe(4 + block.length);
    out.writeInt32BE(body.length, 0);
    block.copy(out, 4);
    return out;
  },
  decompress(body, maxLength) {
    if (body.length < 4) throw new ProtocolError(`An lz4 frame body needs a 4-byte length, it has ${body.length} bytes`);
    const length = body.readInt32BE(0);
    if (length < 0 || length > maxLength) {
      throw new ProtocolError(`lz4 frame body announces ${length} uncompressed bytes, outside 0..${maxLength}`);
    }
    if (length === 0) return Buffer.alloc(0);
    return lz4DecompressBlock(body.subarray(4), length);
  },
};

export const snappy: FrameCompression = {
  name: 'snappy',
  compress: (body) => snappyCompress(body),
  decompress: (body, maxLength) => snappyDecompress(body, maxLength),
};

/** The compression named in STARTUP (case-insensitive), or undefined for one we do not speak. */
export function frameCompression(name: string): FrameCompression | undefined {
  const n = name.toLowerCase();
  return n === 'lz4' ? lz4 : n === 'snappy' ? snappy : undefined;
}
