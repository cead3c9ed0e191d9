import { describe, expect, it } from '@jest/globals';
import { copyMatch } from '../../src/protocol/match-copy.js';
import { lz4DecompressBlock } from '../../src/protocol/lz4.js';

// Seeded (MATCH_COPY_SEED replays a run); printed so a failure can be reproduced.
const seed0 = Number(process.env.MATCH_COPY_SEED ?? 20261203);
let seed = seed0;
const random = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) >>> 8) % n;

/** The obvious definition: one byte at a time, reading what was just written. */
function byteByByte(out: Buffer, at: number, offset: number, length: number): void {
  for (let k = 0; k < length; k++) out[at + k] = out[at - offset + k]!;
}

describe('copyMatch', () => {
  it(`equals the byte-by-byte copy for overlapping and disjoint references (seed ${seed0})`, () => {
    for (let round = 0; round < 2000; round++) {
      const prefix = 1 + random(64);
      const offset = 1 + random(prefix);
      const length = 1 + random(300);
      const a = Buffer.alloc(prefix + length);
      for (let i = 0; i < prefix; i++) a[i] = random(256);
      const b = Buffer.from(a);
      copyMatch(a, prefix, offset, length);
      byteByByte(b, prefix, offset, length);
      if (!a.equals(b)) throw new Error(`seed ${seed0}, round ${round}: offset ${offset} length ${length} differ`);
    }
  });

  it('expands an LZ4 bomb (one literal, one 16 MiB match at offset 1) to the right bytes', () => {
    const length = 16 * 1024 * 1024;
    const extra = length - 1 - 4 - 5; // match length beyond the minimum 4; the last 5 bytes are literals
    const lengthBytes: number[] = [];
    let rest = extra - 15;
    while (rest >= 255) {
      lengthBytes.push(255);
      rest -= 255;
    }
    lengthBytes.push(rest);
    const block = Buffer.from([0x1f, 0x61, 0x01, 0x00, ...lengthBytes, 0x50, 0x61, 0x61, 0x61, 0x61, 0x61]);
    const out = lz4DecompressBlock(block, length);
    expect(out.length).toBe(length);
    expect(out.every((b) => b === 0x61)).toBe(true);
  });
});
