/**
 * Tokens as CQL bigint values. They go to the driver as the 8 bytes of the wire format, which it
 * sends unchanged whatever its `encoding.useBigIntAsLong` setting (a bigint is refused without it,
 * a Long with it), and come back as a driver Long or a bigint, depending on that same setting.
 */
const min = -(1n << 63n);
const max = (1n << 63n) - 1n;

export function encodeFenceToken(token: bigint): Buffer {
  if (token < min || token > max) throw new RangeError(`fencing token ${token} does not fit a CQL bigint`);
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(token);
  return bytes;
}

/** The stored fence, or undefined for none yet (null). */
export function decodeFenceToken(value: unknown): bigint | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'bigint') return value;
  // A driver Long: its toString() is the decimal value.
  return BigInt(String(value));
}
