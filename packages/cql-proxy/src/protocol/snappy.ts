import { ProtocolError } from './errors.js';

/**
 * Raw Snappy decompression (github.com/google/snappy, format_description.txt): a varint of the
 * uncompressed length, then elements tagged by their low two bits — literal, or copy with a 1-, 2-
 * or 4-byte offset. Written here because snappyjs decodes without bounds checks: a negative 4-byte
 * literal length moves its read position backwards and loops forever (a one-packet denial of
 * service). Every read and write below is checked; the output must be filled exactly.
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

export function snappyDecompress(src: Uint8Array, maxLength: number): Buffer {
  const { length, start } = readPreamble(src);
  if (length > maxLength) throw corrupt(`announces ${length} bytes, more than the ${maxLength} allowed`);
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
    if (offset >= len) out.copy(out, d, d - offset, d - offset + len);
    else for (let k = 0; k < len; k++) out[d + k] = out[d - offset + k] as number;
    d += len;
  }
  if (d !== length) throw corrupt(`expanded to ${d} bytes, ${length} announced`);
  return out;
}
