import { isIPv4, isIPv6 } from 'node:net';
import { encodingError, ProtocolError } from './errors.js';

/**
 * IP addresses as the protocol carries them ([inet], [inetaddr], the `inet` cell type): 4 or 16
 * raw bytes. Text uses Node's notation (dotted IPv4; RFC 5952 IPv6, `::ffff:a.b.c.d` for mapped
 * IPv4), so an address read off the wire compares equal to `socket.remoteAddress`.
 */

/** The 4- or 16-byte form of `address`; a zone id (`%eth0`) is dropped. */
export function addressToBytes(address: string): Buffer {
  if (isIPv4(address)) return Buffer.from(address.split('.').map(Number));
  const bare = address.split('%')[0] ?? '';
  if (!isIPv6(bare)) {
    throw encodingError(`"${address}" is not an IPv4 or IPv6 address`);
  }
  let text = bare;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // Embedded IPv4 (`::ffff:1.2.3.4`): rewrite its four bytes as two hex groups.
    const v4 = Buffer.from(
      text
        .slice(lastColon + 1)
        .split('.')
        .map(Number),
    );
    text = `${text.slice(0, lastColon + 1)}${v4.readUInt16BE(0).toString(16)}:${v4.readUInt16BE(2).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groupsOf = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = groupsOf(head);
  const right = groupsOf(tail ?? '');
  const zeros = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  const groups = [...left, ...zeros, ...right];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

/** The text form of a 4- or 16-byte address. */
export function bytesToAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return Array.from(bytes).join('.');
  if (bytes.length !== 16) throw new ProtocolError(`An IP address has 4 or 16 bytes, not ${bytes.length}`);
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${Array.from(bytes.subarray(12)).join('.')}`;
  }
  // RFC 5952: compress the longest run (first on ties) of two or more zero groups.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
