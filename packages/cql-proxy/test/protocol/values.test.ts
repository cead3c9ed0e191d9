import { describe, expect, it } from '@jest/globals';
import { Reader, UNSET } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { addressToBytes, bytesToAddress } from '../../src/protocol/inet.js';
import { Consistency, consistencyName } from '../../src/protocol/consistency.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

describe('notation types', () => {
  it('encodes each type as spec §3 lays it out', () => {
    const w = new Writer(1)
      .writeInt(-2)
      .writeLong(-1n)
      .writeShort(0xabcd)
      .writeByte(7)
      .writeString('hé')
      .writeLongString('ab')
      .writeUuid('00112233-4455-6677-8899-aabbccddeeff')
      .writeStringList(['a', 'b'])
      .writeBytes(null)
      .writeBytes(hex('0102'))
      .writeValue(UNSET)
      .writeShortBytes(hex('ff'))
      .writeInet({ address: '10.0.0.1', port: 9042 })
      .writeInetAddr('::1')
      .writeConsistency(0x0a);
    expect(w.finish().toString('hex')).toBe(
      'fffffffe' +
        'ffffffffffffffff' +
        'abcd' +
        '07' +
        '000368c3a9' +
        '000000026162' +
        '00112233445566778899aabbccddeeff' +
        '0002' +
        '000161' +
        '000162' +
        'ffffffff' +
        '000000020102' +
        'fffffffe' +
        '0001ff' +
        '040a000001' +
        '00002352' +
        '10' +
        '00000000000000000000000000000001' +
        '000a',
    );
  });

  it('round-trips every type', () => {
    const strings = new Map([
      ['CQL_VERSION', '3.0.0'],
      ['COMPRESSION', 'lz4'],
    ]);
    const multi = new Map([
      ['COMPRESSION', ['lz4', 'snappy']],
      ['EMPTY', []],
    ]);
    const bytesMap = new Map<string, Buffer | null>([
      ['k', hex('00')],
      ['n', null],
    ]);
    const body = new Writer()
      .writeInt(2147483647)
      .writeLong(9223372036854775807n)
      .writeString('')
      .writeLongString('SELECT * FROM system.local')
      .writeUuid('550e8400-e29b-41d4-a716-446655440000')
      .writeValue(null)
      .writeValue(UNSET)
      .writeValue(hex('abcd'))
      .writeInet({ address: '2001:db8::8a2e:370:7334', port: 1 })
      .writeStringMap(strings)
      .writeStringMultimap(multi)
      .writeBytesMap(bytesMap)
      .finish();
    const r = new Reader(body);
    expect(r.readInt()).toBe(2147483647);
    expect(r.readLong()).toBe(9223372036854775807n);
    expect(r.readString()).toBe('');
    expect(r.readLongString()).toBe('SELECT * FROM system.local');
    expect(r.readUuid()).toBe('550e8400-e29b-41d4-a716-446655440000');
    expect(r.readValue()).toBeNull();
    expect(r.readValue()).toBe(UNSET);
    expect(r.readValue()).toEqual(hex('abcd'));
    expect(r.readInet()).toEqual({ address: '2001:db8::8a2e:370:7334', port: 1 });
    expect(r.readStringMap()).toEqual(strings);
    expect(r.readStringMultimap()).toEqual(multi);
    expect(r.readBytesMap()).toEqual(bytesMap);
    expect(r.remaining).toBe(0);
  });

  it('grows from any capacity without losing bytes', () => {
    const w = new Writer(1);
    for (let i = 0; i < 2000; i++)
      w.writeString(`s${i}`)
        .writeInt(i)
        .writeRaw(Buffer.alloc(i % 7, i));
    const r = new Reader(w.finish());
    for (let i = 0; i < 2000; i++) {
      expect(r.readString()).toBe(`s${i}`);
      expect(r.readInt()).toBe(i);
      expect(r.readRaw(i % 7)).toEqual(Buffer.alloc(i % 7, i));
    }
    expect(r.remaining).toBe(0);
  });

  it('throws ProtocolError, never RangeError, on every truncation', () => {
    const body = new Writer()
      .writeString('abc')
      .writeStringMap(new Map([['a', 'b']]))
      .writeInet({ address: '::1', port: 2 })
      .writeBytes(hex('0102'))
      .finish();
    const readAll = (r: Reader) => {
      r.readString();
      r.readStringMap();
      r.readInet();
      r.readBytes();
    };
    readAll(new Reader(body));
    for (let n = 0; n < body.length; n++) {
      expect(() => readAll(new Reader(body.subarray(0, n)))).toThrow(ProtocolError);
    }
  });

  it('rejects lengths the notation forbids', () => {
    expect(() => new Reader(hex('fffffffd')).readValue()).toThrow(/Invalid \[value\] length -3/);
    expect(() => new Reader(hex('ffffffff')).readLongString()).toThrow(ProtocolError);
    expect(() => new Reader(hex('05 0102030405')).readInetAddr()).toThrow(/\[inetaddr\] size 5/);
    // A count far larger than the body cannot make the reader allocate or loop past the end.
    expect(() => new Reader(hex('ffff 0000')).readStringList()).toThrow(ProtocolError);
    expect(() => new Reader(hex('7fffffff')).readBytes()).toThrow(ProtocolError);
  });

  it('refuses values the notation cannot hold', () => {
    expect(() => new Writer().writeShort(65536)).toThrow(ProtocolError);
    expect(() => new Writer().writeString('x'.repeat(65536))).toThrow(ProtocolError);
    expect(() => new Writer().writeUuid('not-a-uuid')).toThrow(ProtocolError);
    expect(() => new Writer().writeInetAddr('example.com')).toThrow(ProtocolError);
  });
});

describe('IP addresses', () => {
  it.each([
    ['127.0.0.1', '7f000001'],
    ['::', '00000000000000000000000000000000'],
    ['::1', '00000000000000000000000000000001'],
    ['fe80::1', 'fe800000000000000000000000000001'],
    ['2001:db8:0:0:1:0:0:1', '20010db8000000000001000000000001'],
    ['::ffff:10.1.2.3', '00000000000000000000ffff0a010203'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
  ])('%s <-> %s', (text, bytes) => {
    expect(addressToBytes(text).toString('hex')).toBe(bytes);
    expect(addressToBytes(bytesToAddress(hex(bytes))).toString('hex')).toBe(bytes);
  });

  it('formats IPv6 per RFC 5952 (longest zero run, first on ties, lowercase)', () => {
    expect(bytesToAddress(addressToBytes('2001:db8:0:0:1:0:0:1'))).toBe('2001:db8::1:0:0:1');
    expect(bytesToAddress(addressToBytes('2001:0DB8:0000:0001:0000:0000:0000:0001'))).toBe('2001:db8:0:1::1');
    expect(bytesToAddress(addressToBytes('1:0:2:3:4:5:6:7'))).toBe('1:0:2:3:4:5:6:7');
    expect(bytesToAddress(addressToBytes('fe80::1%eth0'))).toBe('fe80::1');
  });
});

describe('consistency levels', () => {
  it('are named as servers print them', () => {
    expect(consistencyName(Consistency.LOCAL_QUORUM)).toBe('LOCAL_QUORUM');
    expect(consistencyName(0x0a)).toBe('LOCAL_ONE');
    expect(consistencyName(0x42)).toBe('0x0042');
  });
});
