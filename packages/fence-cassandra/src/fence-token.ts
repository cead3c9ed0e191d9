import { InvalidArgumentError } from '@muster/core';

/**
 * Tokens as CQL bigint values. They go to the driver as the 8 bytes of the wire format, which it
 * sends unchanged whatever its `encoding.useBigIntAsLong` setting (a bigint is refused without it,
 * a Long with it), and come back as a driver Long or a bigint, depending on that same setting.
 */
const min = -(1n << 63n);
const max = (1n << 63n) - 1n;

export function encodeFenceToken(token: bigint): Buffer {
  if (token < min || token > max) {
    // Core accepts stored tokens of up to 30 digits; its own are wall-clock µs (16 digits), so one
    // past a CQL bigint (signed 64-bit) means a stored token set by hand, or another lock's tokens.
    throw new InvalidArgumentError(
      `CassandraFence: fencing token ${token} does not fit the fence column, a CQL bigint (at most ${max}); ` +
        `the lock's stored token was set by hand that high: set it back to the highest token the fences hold (readToken)`,
    );
  }
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
