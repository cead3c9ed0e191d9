import { addressToBytes } from './inet.js';
import { encodingError } from './errors.js';
import { UNSET, type InetAddress, type Unset } from './reader.js';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

/**
 * Writes the notation types of spec §3 into a buffer that grows by doubling. `finish()` returns a
 * view of the bytes written; the writer must not be used afterwards.
 */
export class Writer {
  private buffer: Buffer;
  private offset = 0;

  constructor(initialCapacity = 256) {
    this.buffer = Buffer.allocUnsafe(Math.max(16, initialCapacity));
  }

  get length(): number {
    return this.offset;
  }

  /** Makes room for `n` bytes and returns where they go. Call it before touching `this.buffer`: it may replace it. */
  private ensure(n: number): number {
    const need = this.offset + n;
    if (need > this.buffer.length) {
      let size = this.buffer.length * 2;
      while (size < need) size *= 2;
      const grown = Buffer.allocUnsafe(size);
      this.buffer.copy(grown, 0, 0, this.offset);
      this.buffer = grown;
    }
    const at = this.offset;
    this.offset = need;
    return at;
  }

  finish(): Buffer {
    return this.buffer.subarray(0, this.offset);
  }

  writeByte(value: number): this {
    const at = this.ensure(1);
    this.buffer.writeUInt8(value, at);
    return this;
  }

  writeShort(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffff) throw encodingError(`${value} does not fit a [short]`);
    const at = this.ensure(2);
    this.buffer.writeUInt16BE(value, at);
    return this;
  }

  writeInt(value: number): this {
    const at = this.ensure(4);
    this.buffer.writeInt32BE(value, at);
    return this;
  }

  /** Reserves an [int] to be filled in later with {@link setInt} (e.g. a count known at the end). */
  reserveInt(): number {
    return this.ensure(4);
  }

  setInt(at: number, value: number): this {
    this.buffer.writeInt32BE(value, at);
    return this;
  }

  writeLong(value: bigint): this {
    const at = this.ensure(8);
    this.buffer.writeBigInt64BE(value, at);
    return this;
  }

  writeRaw(bytes: Uint8Array): this {
    const at = this.ensure(bytes.length);
    this.buffer.set(bytes, at);
    return this;
  }

  writeString(value: string): this {
    const n = Buffer.byteLength(value, 'utf8');
    if (n > 0xffff) throw encodingError(`A [string] holds at most 65535 bytes, not ${n}`);
    this.writeShort(n);
    const at = this.ensure(n);
    this.buffer.write(value, at, n, 'utf8');
    return this;
  }

  writeLongString(value: string): this {
    const n = Buffer.byteLength(value, 'utf8');
    this.writeInt(n);
    const at = this.ensure(n);
    this.buffer.write(value, at, n, 'utf8');
    return this;
  }

  writeUuid(value: string): this {
    if (!UUID.test(value)) throw encodingError(`"${value}" is not a UUID`);
    return this.writeRaw(Buffer.from(value.replaceAll('-', ''), 'hex'));
  }

  writeStringList(values: readonly string[]): this {
    this.writeShort(values.length);
    for (const v of values) this.writeString(v);
    return this;
  }

  writeBytes(value: Uint8Array | null): this {
    if (value === null) return this.writeInt(-1);
    return this.writeInt(value.length).writeRaw(value);
  }

  writeValue(value: Uint8Array | null | Unset): this {
    if (value === UNSET) return this.writeInt(-2);
    return this.writeBytes(value);
  }

  writeShortBytes(value: Uint8Array): this {
    return this.writeShort(value.length).writeRaw(value);
  }

  writeInetAddr(address: string): this {
    const bytes = addressToBytes(address);
    return this.writeByte(bytes.length).writeRaw(bytes);
  }

  writeInet(inet: InetAddress): this {
    return this.writeInetAddr(inet.address).writeInt(inet.port);
  }

  writeConsistency(value: number): this {
    return this.writeShort(value);
  }

  writeStringMap(map: ReadonlyMap<string, string>): this {
    this.writeShort(map.size);
    for (const [k, v] of map) this.writeString(k).writeString(v);
    return this;
  }

  writeStringMultimap(map: ReadonlyMap<string, readonly string[]>): this {
    this.writeShort(map.size);
    for (const [k, v] of map) this.writeString(k).writeStringList(v);
    return this;
  }

  writeBytesMap(map: ReadonlyMap<string, Uint8Array | null>): this {
    this.writeShort(map.size);
    for (const [k, v] of map) this.writeString(k).writeBytes(v);
    return this;
  }
}
