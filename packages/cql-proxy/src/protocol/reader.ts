import { bytesToAddress } from './inet.js';
import { ProtocolError } from './errors.js';

/** The `not set` [value] (length -2): leaves the bound column unchanged. */
export const UNSET: unique symbol = Symbol.for('muster.cql.unset');
export type Unset = typeof UNSET;

/** An [inet]: address and port. */
export interface InetAddress {
  readonly address: string;
  readonly port: number;
}

/**
 * Reads the notation types of spec §3 from a message body, big-endian. Every read checks the bytes
 * are there and throws {@link ProtocolError} (PROTOCOL_ERROR) naming the type and offset when they
 * are not, so a truncated or lying body can never read past its end or allocate from a bogus
 * length. [bytes]-like reads return views into the body, not copies.
 */
export class Reader {
  private offset = 0;

  constructor(private readonly body: Buffer) {}

  /** Bytes not read yet. */
  get remaining(): number {
    return this.body.length - this.offset;
  }

  get position(): number {
    return this.offset;
  }

  private take(n: number, what: string): number {
    if (n > this.remaining) {
      throw new ProtocolError(
        `Truncated ${what} at offset ${this.offset}: needs ${n} bytes, ${this.remaining} left in a ${this.body.length}-byte body`,
      );
    }
    const at = this.offset;
    this.offset += n;
    return at;
  }

  readByte(): number {
    return this.body.readUInt8(this.take(1, '[byte]'));
  }

  readShort(): number {
    return this.body.readUInt16BE(this.take(2, '[short]'));
  }

  readInt(): number {
    return this.body.readInt32BE(this.take(4, '[int]'));
  }

  readLong(): bigint {
    return this.body.readBigInt64BE(this.take(8, '[long]'));
  }

  /** Steps over `n` bytes, checked like a read; no view is made (the body check's hot path: a view costs ~100 ns). */
  skip(n: number, what: string): void {
    this.take(n, what);
  }

  /** `n` raw bytes, as a view. */
  readRaw(n: number, what = 'raw bytes'): Buffer {
    const at = this.take(n, what);
    return this.body.subarray(at, at + n);
  }

  /** Everything not read yet, as a view. */
  readRest(): Buffer {
    return this.readRaw(this.remaining);
  }

  readString(): string {
    const n = this.readShort();
    return this.readRaw(n, '[string]').toString('utf8');
  }

  readLongString(): string {
    const n = this.readInt();
    if (n < 0) throw new ProtocolError(`Negative [long string] length ${n} at offset ${this.offset - 4}`);
    return this.readRaw(n, '[long string]').toString('utf8');
  }

  /** A [uuid] in its canonical 8-4-4-4-12 lowercase text form. */
  readUuid(): string {
    const hex = this.readRaw(16, '[uuid]').toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  readStringList(): string[] {
    const n = this.readShort();
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(this.readString());
    return out;
  }

  /** [bytes]: `null` for a negative length. */
  readBytes(): Buffer | null {
    const n = this.readInt();
    return n < 0 ? null : this.readRaw(n, '[bytes]');
  }

  /** [value]: `null` for -1, {@link UNSET} for -2; any other negative length is an error. */
  readValue(): Buffer | null | Unset {
    const n = this.readInt();
    if (n === -1) return null;
    if (n === -2) return UNSET;
    if (n < 0) throw new ProtocolError(`Invalid [value] length ${n} at offset ${this.offset - 4}`);
    return this.readRaw(n, '[value]');
  }

  readShortBytes(): Buffer {
    const n = this.readShort();
    return this.readRaw(n, '[short bytes]');
  }

  /** [inetaddr]: a size byte (4 or 16) and the address. */
  readInetAddr(): string {
    const n = this.readByte();
    if (n !== 4 && n !== 16) throw new ProtocolError(`Invalid [inetaddr] size ${n} at offset ${this.offset - 1}`);
    return bytesToAddress(this.readRaw(n, '[inetaddr]'));
  }

  /** [inet]: an [inetaddr] and an [int] port. */
  readInet(): InetAddress {
    const address = this.readInetAddr();
    const port = this.readInt();
    return { address, port };
  }

  readConsistency(): number {
    return this.readShort();
  }

  readStringMap(): Map<string, string> {
    const n = this.readShort();
    const out = new Map<string, string>();
    for (let i = 0; i < n; i++) out.set(this.readString(), this.readString());
    return out;
  }

  readStringMultimap(): Map<string, string[]> {
    const n = this.readShort();
    const out = new Map<string, string[]>();
    for (let i = 0; i < n; i++) out.set(this.readString(), this.readStringList());
    return out;
  }

  readBytesMap(): Map<string, Buffer | null> {
    const n = this.readShort();
    const out = new Map<string, Buffer | null>();
    for (let i = 0; i < n; i++) out.set(this.readString(), this.readBytes());
    return out;
  }
}
