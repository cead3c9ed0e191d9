import { ProtocolError } from './errors.js';
import { copyMatch } from './match-copy.js';

/**
 * Raw Snappy (github.com/google/snappy, format_description.txt): a varint of the uncompressed
 * length, then elements tagged by their low two bits — literal, or copy with a 1-, 2- or 4-byte
 * offset. Written here because snappyjs, the pure-JS package, decodes without bounds checks: a
 * negative 4-byte literal length moves its read position backwards and loops forever (a one-packet
 * denial of service). Every read and write in the decoder is checked; the output must be filled
 * exactly. The encoder is the simple greedy kind: 64 KiB blocks, one hash probe, 2-byte offsets.
 */

function corrupt(detail: string): ProtocolError {
  return new ProtocolError(`Corrupt snappy body: ${detail}`);
}

/** The uncompressed length a Snappy body announces, and where its elements start. */
function readPreamble(src: Uint8Array): { length: number; start: number } {
  let length = 0;
  for (let i = 0; i < 5; i++) {
    if (i >= src.length) throw corrupt('truncated length');
    const b = src[i] as number;
    length += (b & 0x7f) * 2 ** (7 * i);
    if (b < 0x80) {
      if (length > 0xffffffff) throw corrupt('length over 32 bits');
      return { length, start: i + 1 };
    }
  }
  throw corrupt('length varint longer than 5 bytes');
}

/** More than the most one input byte of raw snappy expands to (64 / 3: a 3-byte copy element writes up to 64 bytes). */
const MAX_EXPANSION = 22;

export function snappyDecompress(src: Uint8Array, maxLength: number): Buffer {
  const { length, start } = readPreamble(src);
  if (length > maxLength) throw corrupt(`announces ${length} bytes, more than the ${maxLength} allowed`);
  // Checked before the output is allocated (see lz4.ts): a copy of 3 bytes writes at most 64.
  if (length > (src.length - start) * MAX_EXPANSION) {
    throw corrupt(`announces ${length} bytes, more than its ${src.length - start} bytes can expand to`);
  }
  const out = Buffer.allocUnsafe(length);
  let s = start;
  let d = 0;
  const need = (n: number) => {
    if (s + n > src.length) throw corrupt('element runs past the end of the input');
  };
  const le = (n: number) => {
    need(n);
    let v = 0;
    for (let i = n - 1; i >= 0; i--) v = v * 256 + (src[s + i] as number);
    s += n;
    return v;
  };
  while (s < src.length) {
    const tag = src[s++] as number;
    let len: number;
    let offset: number;
    switch (tag & 0x03) {
      case 0: {
        len = (tag >>> 2) + 1;
        if (len > 60) len = le(len - 60) + 1;
        need(len);
        if (d + len > length) throw corrupt(`output would exceed the announced ${length} bytes`);
        out.set(src.subarray(s, s + len), d);
        s += len;
        d += len;
        continue;
      }
      case 1:
        len = ((tag >>> 2) & 0x07) + 4;
        offset = ((tag >>> 5) << 8) | le(1);
        break;
      case 2:
        len = (tag >>> 2) + 1;
        offset = le(2);
        break;
      default:
        len = (tag >>> 2) + 1;
        offset = le(4);
    }
    if (offset === 0 || offset > d) throw corrupt(`copy offset ${offset} at output position ${d}`);
    if (d + len > length) throw corrupt(`output would exceed the announced ${length} bytes`);
    copyMatch(out, d, offset, len);
    d += len;
  }
  if (d !== length) throw corrupt(`expanded to ${d} bytes, ${length} announced`);
  return out;
}

const BLOCK = 1 << 16;
const HASH_BITS = 14;

const read32 = (b: Uint8Array, i: number) =>
  ((b[i] as number) | ((b[i + 1] as number) << 8) | ((b[i + 2] as number) << 16) | ((b[i + 3] as number) << 24)) >>> 0;

function writeLiteral(out: Buffer, o: number, src: Uint8Array, from: number, to: number): number {
  const n = to - from;
  if (n === 0) return o;
  if (n <= 60) {
    out[o++] = (n - 1) << 2;
  } else {
    const bytes = n - 1 < 0x100 ? 1 : n - 1 < 0x10000 ? 2 : n - 1 < 0x1000000 ? 3 : 4;
    out[o++] = (59 + bytes) << 2;
    for (let i = 0; i < bytes; i++) out[o++] = Math.floor((n - 1) / 2 ** (8 * i)) & 0xff;
  }
  out.set(src.subarray(from, to), o);
  return o + n;
}

function writeCopy(out: Buffer, o: number, offset: number, length: number): number {
  for (let left = length; left > 0;) {
    const n = Math.min(left, 64);
    out[o++] = ((n - 1) << 2) | 2;
    out[o++] = offset & 0xff;
    out[o++] = offset >>> 8;
    left -= n;
  }
  return o;
}

export function snappyCompress(src: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(32 + src.length + Math.ceil(src.length / 6));
  let o = 0;
  for (let n = src.length; ; n = Math.floor(n / 128)) {
    if (n < 0x80) {
      out[o++] = n;
      break;
    }
    out[o++] = (n & 0x7f) | 0x80;
  }
  const table = new Int32Array(1 << HASH_BITS);
  for (let start = 0; start < src.length; start += BLOCK) {
    const end = Math.min(start + BLOCK, src.length);
    table.fill(-1);
    let anchor = start;
    let i = start;
    while (i + 4 <= end) {
      const seq = read32(src, i);
      const h = Math.imul(seq, 0x1e35a7bd) >>> (32 - HASH_BITS);
      const ref = table[h] as number;
      table[h] = i;
      if (ref < 0 || read32(src, ref) !== seq) {
        i++;
        continue;
      }
      let length = 4;
      while (i + length < end && src[ref + length] === src[i + length]) length++;
      o = writeLiteral(out, o, src, anchor, i);
      o = writeCopy(out, o, i - ref, length);
      i += length;
      anchor = i;
    }
    o = writeLiteral(out, o, src, anchor, end);
  }
  return out.subarray(0, o);
}
