import { crc32 as zlibCrc32 } from 'node:zlib';

/**
 * The two checksums of v5 segments (spec v5 §2.1–2.2), with the parameters Cassandra uses.
 *
 * CRC24 protects the header: initial value 0x875060, polynomial 0x1974F0B, fed the header bytes in
 * wire order (the header is a little-endian integer, so least significant byte first), each byte
 * MSB first, no reflection, no final xor.
 *
 * CRC32 protects the payload: the standard (zlib) CRC-32, but primed with the four bytes
 * FA 2D 55 CA before the payload, as Cassandra's `Crc.crc32()` does.
 */
const CRC24_INIT = 0x875060;
const CRC24_POLY = 0x1974f0b;
const CRC32_PRIMER = Buffer.from([0xfa, 0x2d, 0x55, 0xca]);
const CRC32_PRIMED = zlibCrc32(CRC32_PRIMER);

export function crc24(bytes: Uint8Array): number {
  let crc = CRC24_INIT;
  for (const byte of bytes) {
    crc ^= byte << 16;
    for (let bit = 0; bit < 8; bit++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= CRC24_POLY;
    }
  }
  return crc & 0xffffff;
}

/** CRC32 of the concatenation of `parts`, primed as the protocol requires. */
export function crc32(...parts: readonly Uint8Array[]): number {
  let crc = CRC32_PRIMED;
  for (const part of parts) crc = zlibCrc32(part, crc);
  return crc >>> 0;
}
