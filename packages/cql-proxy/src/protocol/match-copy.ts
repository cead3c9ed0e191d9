/**
 * Copies an LZ77 back-reference (LZ4 match, Snappy copy): `length` bytes starting `offset` bytes
 * behind `at`, written at `at`. When the reference overlaps what it writes (offset < length) the
 * output repeats its last `offset` bytes; instead of a byte loop (which made a 255 MiB LZ4 bomb cost
 * seconds of event loop) the already repeated run is doubled with copyWithin: every copied run
 * starts `offset` bytes back and is a whole number of periods long, so each copy is exact.
 */
export function copyMatch(out: Buffer, at: number, offset: number, length: number): void {
  const from = at - offset;
  if (offset >= length) {
    out.copyWithin(at, from, from + length);
    return;
  }
  let written = 0;
  while (written < length) {
    const n = Math.min(length - written, offset + written);
    out.copyWithin(at + written, from, from + n);
    written += n;
  }
}
