import { isIP } from 'node:net';
import { addressToBytes, bytesToAddress } from '../protocol/inet.js';

/**
 * Whether a driver can be told to dial `address`: an IP literal (the `inet` columns cannot carry a
 * host name) that is not the unspecified address. Advertising 0.0.0.0 or :: makes drivers dial
 * themselves, or fall back to guesses (cassandra-driver swaps in `peer`); we never do it.
 */
export function isAdvertisable(address: string | undefined): address is string {
  if (address === undefined || isIP(address.split('%')[0] ?? '') === 0) return false;
  return addressToBytes(address).some((b) => b !== 0);
}

/**
 * One spelling per address, so `10.0.0.1`, `::ffff:10.0.0.1` and a bind value's 16 bytes compare
 * equal. IPv4-mapped IPv6 folds to IPv4 because that is what Cassandra's Java `InetAddress` does
 * with it, so a real server matches `WHERE peer = '::ffff:10.0.0.1'` against `10.0.0.1` too.
 */
export function canonicalAddress(address: string | Uint8Array): string {
  const bytes = typeof address === 'string' ? addressToBytes(address) : address;
  const mapped = bytes.length === 16 && bytes.subarray(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return bytesToAddress(mapped ? bytes.subarray(12) : bytes);
}
