/**
 * The token Cassandra's Murmur3Partitioner gives a partition key: the first 64 bits of
 * MurmurHash3 x64_128 (seed 0), with two quirks of Cassandra's Java port kept, since tokens must
 * equal the server's exactly:
 * - the tail bytes are read as signed Java bytes and sign-extended before they are shifted in, so
 *   a tail byte of 0x80 or more sets every bit above it;
 * - Long.MIN_VALUE is never a token: it becomes Long.MAX_VALUE.
 */

const MASK = (1n << 64n) - 1n;
const C1 = 0x87c37b91114253d5n;
const C2 = 0x4cf5ad432745937fn;
const MIN = -(1n << 63n);
const MAX = (1n << 63n) - 1n;

const rotl = (x: bigint, r: bigint): bigint => ((x << r) | (x >> (64n - r))) & MASK;

function fmix(k: bigint): bigint {
  k ^= k >> 33n;
  k = (k * 0xff51afd7ed558ccdn) & MASK;
  k ^= k >> 33n;
  k = (k * 0xc4ceb9fe1a85ec53n) & MASK;
  k ^= k >> 33n;
  return k;
}

/** Tail byte `i` as Java's `(long) key.get(i)`: sign-extended to 64 bits (unsigned here). */
const tailByte = (key: Uint8Array, i: number): bigint => BigInt.asUintN(64, BigInt((key[i]! << 24) >> 24));

/** The Murmur3Partitioner token of a routing key (a signed 64-bit value). */
export function murmur3Token(key: Uint8Array): bigint {
  const length = key.length;
  const blocks = length >> 4;
  const view = new DataView(key.buffer, key.byteOffset, key.byteLength);
  let h1 = 0n;
  let h2 = 0n;
  for (let i = 0; i < blocks; i++) {
    let k1 = view.getBigUint64(i * 16, true);
    let k2 = view.getBigUint64(i * 16 + 8, true);
    k1 = (rotl((k1 * C1) & MASK, 31n) * C2) & MASK;
    h1 ^= k1;
    h1 = (((rotl(h1, 27n) + h2) & MASK) * 5n + 0x52dce729n) & MASK;
    k2 = (rotl((k2 * C2) & MASK, 33n) * C1) & MASK;
    h2 ^= k2;
    h2 = (((rotl(h2, 31n) + h1) & MASK) * 5n + 0x38495ab5n) & MASK;
  }
  const tail = blocks * 16;
  const rest = length & 15;
  let k1 = 0n;
  let k2 = 0n;
  for (let i = Math.min(rest, 15) - 1; i >= 8; i--) k2 ^= (tailByte(key, tail + i) << BigInt((i - 8) * 8)) & MASK;
  if (rest > 8) {
    k2 = (rotl((k2 * C2) & MASK, 33n) * C1) & MASK;
    h2 ^= k2;
  }
  for (let i = Math.min(rest, 8) - 1; i >= 0; i--) k1 ^= (tailByte(key, tail + i) << BigInt(i * 8)) & MASK;
  if (rest > 0) {
    k1 = (rotl((k1 * C1) & MASK, 31n) * C2) & MASK;
    h1 ^= k1;
  }
  h1 ^= BigInt(length);
  h2 ^= BigInt(length);
  h1 = (h1 + h2) & MASK;
  h2 = (h2 + h1) & MASK;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h1 = (h1 + h2) & MASK;
  const token = BigInt.asIntN(64, h1);
  return token === MIN ? MAX : token;
}
