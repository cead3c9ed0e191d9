import { describe, expect, it } from '@jest/globals';
import { lz4, snappy, frameCompression } from '../../src/protocol/compression.js';
import { lz4CompressBlock, lz4DecompressBlock } from '../../src/protocol/lz4.js';
import { ProtocolError } from '../../src/protocol/errors.js';
import { snappyCompress, snappyDecompress } from '../../src/protocol/snappy.js';
import { lz4Bomb, snappyBomb } from '../adversarial/cases.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 16) & 0xff;
const sample = (n: number, alphabet: number) => Buffer.from(Array.from({ length: n }, () => random() % alphabet));

const inputs: Buffer[] = [
  Buffer.alloc(0),
  Buffer.from('a'),
  Buffer.from('exactly twelve'),
  Buffer.alloc(70000, 0x61),
  Buffer.from('SELECT * FROM system.peers WHERE peer = ? '.repeat(200)),
  sample(5000, 256),
  sample(100000, 4),
];

describe('LZ4 block', () => {
  it('decodes a block made by the reference format (lz4_flex via lz4-napi)', () => {
    const text = 'Cassandra Cassandra Cassandra native protocol native protocol';
    const block = hex('af43617373616e647261200a0001f6006e61746976652070726f746f636f6c1000606f746f636f6c');
    expect(lz4DecompressBlock(block, text.length).toString()).toBe(text);
  });

  it('round-trips and actually compresses repetitive input', () => {
    for (const input of inputs) expect(lz4DecompressBlock(lz4CompressBlock(input), input.length)).toEqual(input);
    expect(lz4CompressBlock(Buffer.alloc(70000, 0x61)).length).toBeLessThan(400);
  });

  it('refuses blocks that lie about their size or point outside the output', () => {
    const block = lz4CompressBlock(inputs[4] as Buffer);
    const n = (inputs[4] as Buffer).length;
    expect(() => lz4DecompressBlock(block, n - 1)).toThrow(ProtocolError);
    expect(() => lz4DecompressBlock(block, n + 1)).toThrow(/expanded to/);
    expect(() => lz4DecompressBlock(hex('1f 61 0500'), 100)).toThrow(/offset 5/);
    expect(() => lz4DecompressBlock(hex('1f 61 0000'), 100)).toThrow(/offset 0/);
    expect(() => lz4DecompressBlock(hex('f0 ff ff'), 100)).toThrow(ProtocolError);
    expect(() => lz4DecompressBlock(Buffer.alloc(0), 1)).toThrow(ProtocolError);
  });

  it('never throws anything but ProtocolError on truncated or mutated blocks', () => {
    const block = lz4CompressBlock(inputs[4] as Buffer);
    const n = (inputs[4] as Buffer).length;
    for (let cut = 0; cut < block.length; cut += 7) {
      expect(() => lz4DecompressBlock(block.subarray(0, cut), n)).toThrow(ProtocolError);
    }
    for (let i = 0; i < 300; i++) {
      const bad = Buffer.from(block);
      bad[random() % bad.length] = random();
      try {
        lz4DecompressBlock(bad, n);
      } catch (e) {
        expect(ProtocolError.is(e)).toBe(true);
      }
    }
  });
});

describe('Snappy', () => {
  it('compresses a repeat into a literal and one 2-byte-offset copy', () => {
    // Checked against snappyjs both ways when this codec replaced it (205 inputs, up to 200 KB).
    expect(snappyCompress(Buffer.from('abcdabcdabcdabcd')).toString('hex')).toBe('10' + '0c61626364' + '2e0400');
  });

  it('round-trips across 64 KiB blocks and long literals', () => {
    for (const input of [Buffer.alloc(200000, 9), sample(70000, 256), sample(140000, 3)]) {
      expect(snappyDecompress(snappyCompress(input), input.length)).toEqual(input);
    }
  });

  it('decodes literals and overlapping copies as the format describes', () => {
    // length 10; literal "abcd"; copy (1-byte offset) of 6 bytes from offset 4, overlapping itself.
    expect(snappyDecompress(hex('0a 0c 61626364 09 04'), 100).toString()).toBe('abcdabcdab');
    // 2-byte-offset copy: tag (len-1)<<2 | 2.
    expect(snappyDecompress(hex('08 0c 61626364 0e 0400'), 100).toString()).toBe('abcdabcd');
  });

  it('does not hang on a negative 4-byte literal length (snappyjs loops forever on this one)', () => {
    expect(() => snappyDecompress(hex('3cfc0811a984aa89227fc5f70b5b'), 1 << 16)).toThrow(ProtocolError);
  });

  it('refuses bad offsets, short output and lengths past the limit', () => {
    expect(() => snappyDecompress(hex('0a 0c 61626364 09 05'), 100)).toThrow(/offset 5/);
    expect(() => snappyDecompress(hex('0b 0c 61626364 09 04'), 100)).toThrow(/expanded to 10 bytes, 11 announced/);
    expect(() => snappyDecompress(hex('ffffffff0f'), 1 << 20)).toThrow(/more than the/);
    expect(() => snappyDecompress(hex('ffffffffff'), 1 << 20)).toThrow(ProtocolError);
  });
});

describe('frame body compression (v3/v4)', () => {
  it('lz4 prefixes the block with the big-endian uncompressed length', () => {
    const body = lz4.compress(Buffer.from('hello'));
    expect(body.subarray(0, 4).toString('hex')).toBe('00000005');
    expect(body.subarray(4).toString('hex')).toBe('50' + Buffer.from('hello').toString('hex'));
  });

  it('snappy writes the raw format: varint length, then tagged literals/copies', () => {
    expect(snappy.compress(Buffer.from('hello')).toString('hex')).toBe('0510' + Buffer.from('hello').toString('hex'));
  });

  it.each([lz4, snappy])('$name round-trips', (codec) => {
    for (const input of inputs) expect(codec.decompress(codec.compress(input), 1 << 20)).toEqual(input);
  });

  it.each([lz4, snappy])('$name refuses bodies that expand past the limit', (codec) => {
    const body = codec.compress(Buffer.alloc(10000));
    expect(() => codec.decompress(body, 9999)).toThrow(ProtocolError);
  });

  it.each([lz4, snappy])('$name throws only ProtocolError on garbage', (codec) => {
    for (let i = 0; i < 300; i++) {
      try {
        codec.decompress(sample(1 + (i % 40), 256), 1 << 16);
      } catch (e) {
        expect(ProtocolError.is(e)).toBe(true);
      }
    }
  });

  it('is chosen by STARTUP name', () => {
    expect(frameCompression('LZ4')).toBe(lz4);
    expect(frameCompression('snappy')).toBe(snappy);
    expect(frameCompression('zstd')).toBeUndefined();
  });
});

// A client's frame may announce any uncompressed length up to maxFrameBytes. Refused only after the
// output was allocated, 14-byte frames announcing 16 MiB cost the proxy about 50 µs each: a 64 KiB
// read of them held the event loop, and every other client, for a quarter of a second.
describe('announced lengths', () => {
  const MiB16 = 16 * 1024 * 1024;

  it('a body announcing more than its bytes can expand to is refused before its output is allocated', () => {
    expect(() => lz4.decompress(Buffer.from([0x01, 0x00, 0x00, 0x00, 0xf0]), MiB16)).toThrow(
      /Corrupt LZ4 block: it announces 16777216 bytes, more than its 1 bytes can expand to/,
    );
    expect(() => snappy.decompress(Buffer.from([0x80, 0x80, 0x80, 0x08, 0xff]), MiB16)).toThrow(
      /announces 16777216 bytes, more than its 1 bytes can expand to/,
    );
  });

  it('the densest encodings still expand in full', () => {
    const lz4Block = lz4Bomb(MiB16);
    expect(lz4DecompressBlock(lz4Block, MiB16).length).toBe(MiB16);
    // One byte past the bound is refused; the bomb above sits just under it.
    expect(() => lz4DecompressBlock(lz4Block, Math.ceil(lz4Block.length * 255) + 1)).toThrow(/can expand to/);
    expect(snappyDecompress(snappyBomb(MiB16), MiB16).length).toBe(MiB16);
  });
});

// Each answer the proxy composes for a client on lz4 is compressed. With a fixed 2^16-entry hash
// table, every 100-byte answer (an ERROR, SUPPORTED) allocated and filled 256 KiB: about 50 µs, so
// a client pipelining cheap requests held the event loop a third of a second per 64 KiB it sent.
describe('LZ4 compression cost', () => {
  /** The lengths of the Int32Arrays `f` allocates (the compressor's hash table is one). */
  const tables = (f: () => void): number[] => {
    const lengths: number[] = [];
    const Original = globalThis.Int32Array;
    globalThis.Int32Array = class extends Original {
      constructor(length: number) {
        super(length);
        lengths.push(length);
      }
    } as Int32ArrayConstructor;
    try {
      f();
    } finally {
      globalThis.Int32Array = Original;
    }
    return lengths;
  };

  it('sizes its hash table to the input: 128 entries for 100 bytes, 2^16 from 32 KiB on', () => {
    expect(tables(() => lz4CompressBlock(sample(100, 16)))).toEqual([128]);
    expect(tables(() => lz4CompressBlock(sample(64 * 1024, 16)))).toEqual([65536]);
    for (const input of inputs) expect(lz4DecompressBlock(lz4CompressBlock(input), input.length).equals(input)).toBe(true);
  });
});
