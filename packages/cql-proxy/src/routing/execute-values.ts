const VALUES = 0x01;
const NAMES_FOR_VALUES = 0x40;

/**
 * The values an EXECUTE binds at `indexes`, read without decoding the rest of the request (this
 * runs for every routed request). Undefined when the request cannot be routed by them: values
 * bound by name (their order is the client's), a key component null or unset, or a body too short
 * (the request check has vetted forwarded bodies; this only must not throw).
 */
export function executeValues(body: Buffer, version: number, indexes: readonly number[]): Buffer[] | undefined {
  let at = 0;
  const skipShortBytes = (): boolean => {
    if (at + 2 > body.length) return false;
    at += 2 + body.readUInt16BE(at);
    return at <= body.length;
  };
  if (!skipShortBytes()) return undefined; // statement id
  if (version >= 5 && !skipShortBytes()) return undefined; // result metadata id
  at += 2; // consistency
  const flagBytes = version >= 5 ? 4 : 1;
  if (at + flagBytes > body.length) return undefined;
  const flags = version >= 5 ? body.readInt32BE(at) : body[at]!;
  at += flagBytes;
  if ((flags & VALUES) === 0 || (flags & NAMES_FOR_VALUES) !== 0 || at + 2 > body.length) return undefined;
  const count = body.readUInt16BE(at);
  at += 2;
  let last = 0;
  for (const i of indexes) last = Math.max(last, i);
  if (last >= count) return undefined;
  const values: (Buffer | undefined)[] = new Array<Buffer | undefined>(last + 1);
  for (let i = 0; i <= last; i++) {
    if (at + 4 > body.length) return undefined;
    const length = body.readInt32BE(at);
    at += 4;
    if (length < 0) continue; // null (-1) or unset (-2): no value
    if (at + length > body.length) return undefined;
    values[i] = body.subarray(at, at + length);
    at += length;
  }
  const out: Buffer[] = [];
  for (const i of indexes) {
    const value = values[i];
    if (value === undefined) return undefined;
    out.push(value);
  }
  return out;
}
