import { randomBytes } from 'node:crypto';

/**
 * Version-1 (time-based) UUIDs, as Cassandra's now() returns them: 100 ns intervals since the
 * Gregorian reform, a per-process random node with the multicast bit set (RFC 4122 §4.5: not a
 * MAC address), and a counter inside a millisecond, so two values made in the same millisecond
 * still differ and keep their order.
 */
const GREGORIAN_OFFSET = 0x01b21dd213814000n;
const node = randomBytes(6);
node[0]! |= 0x01;
const clockSeq = randomBytes(2).readUInt16BE(0) & 0x3fff;
let lastMs = 0;
let sequence = 0;

export function timeUuid(ms: number = Date.now()): string {
  if (ms === lastMs) sequence = Math.min(sequence + 1, 9_999);
  else {
    lastMs = ms;
    sequence = 0;
  }
  const t = BigInt(ms) * 10_000n + BigInt(sequence) + GREGORIAN_OFFSET;
  const b = Buffer.alloc(16);
  b.writeUInt32BE(Number(t & 0xffffffffn), 0);
  b.writeUInt16BE(Number((t >> 32n) & 0xffffn), 4);
  b.writeUInt16BE(Number((t >> 48n) & 0x0fffn) | 0x1000, 6);
  b.writeUInt16BE(clockSeq | 0x8000, 8);
  node.copy(b, 10);
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The millisecond a version-1 UUID was made at. */
export function timeUuidMillis(uuid: string): number {
  const hex = uuid.replace(/-/g, '');
  const t =
    ((BigInt(`0x${hex.slice(12, 16)}`) & 0x0fffn) << 48n) | (BigInt(`0x${hex.slice(8, 12)}`) << 32n) | BigInt(`0x${hex.slice(0, 8)}`);
  return Number((t - GREGORIAN_OFFSET) / 10_000n);
}
