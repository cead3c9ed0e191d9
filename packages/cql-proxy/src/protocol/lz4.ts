import { ProtocolError } from './errors.js';
import { copyMatch } from './match-copy.js';

/**
 * The LZ4 block format (github.com/lz4/lz4, doc/lz4_Block_format.md), written here because the npm
 * options either lack raw blocks with a caller-chosen length prefix (lz4-napi writes a little-endian
 * one) or decode without bounds checks (lz4js). Both directions are small: sequences of
 * token · literals · 2-byte offset · match, the last sequence literals only.
 *
 * Decoding is the part that faces untrusted input: every read and write is checked, the output size
 * is fixed in advance by the caller, and a block that does not fill it exactly is an error.
 */

const MIN_MATCH = 4;
/** The last 5 bytes are always literals, and a match may not start in the last 12. */
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const HASH_BITS = 16;
const MAX_OFFSET = 0xffff;

/** Worst-case size of a compressed block for `n` input bytes. */
export function lz4CompressBound(n: number): number {
  return n + Math.floor(n / 255) + 16;
}

function writeLength(out: Uint8Array, at: number, rest: number): number {
  while (rest >= 255) {
    out[at++] = 255;
    rest -= 255;
  }
  out[at++] = rest;
  return at;
}

function writeSequence(out: Uint8Array, at: number, src: Uint8Array, from: number, to: number, offset: number, match: number): number {
  const literals = to - from;
  const tokenAt = at++;
  let token = Math.min(literals, 15) << 4;
  if (literals >= 15) at = writeLength(out, at, literals - 15);
  out.set(src.subarray(from, to), at);
  at += literals;
  if (match > 0) {
    out[at++] = offset & 0xff;
    out[at++] = offset >>> 8;
    const extra = match - MIN_MATCH;
    token |= Math.min(extra, 15);
    if (extra >= 15) at = writeLength(out, at, extra - 15);
  }
  out[tokenAt] = token;
  return at;
}

const read32 = (b: Uint8Array, i: number) =>
  ((b[i] ?? 0) | ((b[i + 1] ?? 0) << 8) | ((b[i + 2] ?? 0) << 16) | ((b[i + 3] ?? 0) << 24)) >>> 0;

/** Compresses `src` into one LZ4 block (greedy, single-probe hash table: fast, modest ratio). */
export function lz4CompressBlock(src: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(lz4CompressBound(src.length));
  let at = 0;
  let anchor = 0;
  if (src.length > MF_LIMIT) {
    // A table sized to the input: a fixed 2^16 entries cost every small answer (an ERROR, SUPPORTED)
    // a 256 KiB allocation and fill, about 50 µs, so a client on lz4 pipelining cheap requests held
    // the event loop for a third of a second per 64 KiB it sent.
    const bits = Math.min(HASH_BITS, 32 - Math.clz32(src.length));
    const table = new Int32Array(1 << bits).fill(-1);
    const matchLimit = src.length - MF_LIMIT;
    let i = 0;
    while (i < matchLimit) {
      const seq = read32(src, i);
      const h = Math.imul(seq, 2654435761) >>> (32 - bits);
      const ref = table[h] ?? -1;
      table[h] = i;
      if (ref < 0 || i - ref > MAX_OFFSET || read32(src, ref) !== seq) {
        i++;
        continue;
      }
      let length = MIN_MATCH;
      const maxLength = src.length - LAST_LITERALS - i;
      while (length < maxLength && src[ref + length] === src[i + length]) length++;
      at = writeSequence(out, at, src, anchor, i, i - ref, length);
      i += length;
      anchor = i;
    }
  }
  at = writeSequence(out, at, src, anchor, src.length, 0, 0);
  return out.subarray(0, at);
}

function corrupt(detail: string): ProtocolError {
  return new ProtocolError(`Corrupt LZ4 block: ${detail}`);
}

/**
 * The most one input byte of an LZ4 block expands to: a match's extra length bytes add 255 each
 * (a token and offset, three bytes, give at most 19).
 */
const MAX_EXPANSION = 255;

/** Decompresses one LZ4 block that must expand to exactly `length` bytes. */
export function lz4DecompressBlock(src: Uint8Array, length: number): Buffer {
  // Checked before the output is allocated: a 5-byte block announcing 16 MiB cost a 16 MiB
  // allocation to refuse, about 50 µs of the event loop for every 14 bytes a client sent.
  if (length > src.length * MAX_EXPANSION) {
    throw corrupt(`it announces ${length} bytes, more than its ${src.length} bytes can expand to`);
  }
  const out = Buffer.allocUnsafe(length);
  let s = 0;
  let d = 0;
  const readLength = (base: number): number => {
    let n = base;
    if (base === 15) {
      let b: number;
      do {
        if (s >= src.length) throw corrupt('length runs past the end of the input');
        b = src[s++] as number;
        n += b;
      } while (b === 255);
    }
    return n;
  };
  for (;;) {
    if (s >= src.length) throw corrupt('input ends before the last sequence');
    const token = src[s++] as number;
    const literals = readLength(token >>> 4);
    if (s + literals > src.length) throw corrupt('literals run past the end of the input');
    if (d + literals > length) throw corrupt(`output would exceed the announced ${length} bytes`);
    out.set(src.subarray(s, s + literals), d);
    s += literals;
    d += literals;
    if (s === src.length) break;
    if (s + 2 > src.length) throw corrupt('offset runs past the end of the input');
    const offset = (src[s] as number) | ((src[s + 1] as number) << 8);
    s += 2;
    if (offset === 0 || offset > d) throw corrupt(`offset ${offset} at output position ${d}`);
    const match = readLength(token & 0x0f) + MIN_MATCH;
    if (d + match > length) throw corrupt(`output would exceed the announced ${length} bytes`);
    copyMatch(out, d, offset, match);
    d += match;
  }
  if (d !== length) throw corrupt(`expanded to ${d} bytes, ${length} announced`);
  return out;
}
