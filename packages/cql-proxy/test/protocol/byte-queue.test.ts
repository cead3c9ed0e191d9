import { describe, expect, it } from '@jest/globals';
import { ByteQueue } from '../../src/protocol/byte-queue.js';
import { seeded } from '../adversarial/cases.js';

describe('ByteQueue', () => {
  const filled = () => {
    const q = new ByteQueue();
    for (const s of ['abc', '', 'defg', 'h']) q.push(Buffer.from(s));
    return q;
  };

  it('reads bytes across chunks without consuming them', () => {
    const q = filled();
    expect(q.length).toBe(8);
    expect([0, 2, 3, 6, 7].map((i) => String.fromCharCode(q.byteAt(i)))).toEqual(['a', 'c', 'd', 'g', 'h']);
    expect(q.peek(5).toString()).toBe('abcde');
    expect(q.length).toBe(8);
  });

  it('returns views inside one chunk and copies only across chunks', () => {
    const q = new ByteQueue();
    const chunk = Buffer.alloc(2048, 'x'); // unpooled, so its ArrayBuffer is its own
    chunk.write('abcdef', 2042);
    q.push(chunk);
    q.push(Buffer.alloc(1024, 'g'));
    q.skip(2042);
    expect(q.take(3).buffer).toBe(chunk.buffer);
    const spanning = q.take(4);
    expect(spanning.toString()).toBe('defg');
    expect(spanning.buffer).not.toBe(chunk.buffer);
    q.skip(1023);
    expect(q.length).toBe(0);
  });

  it('joins small chunks that queue up behind one another into one buffer, and the bytes read back unchanged', () => {
    const q = new ByteQueue();
    const bytes = Buffer.from('the quick brown fox');
    for (const byte of bytes) q.push(Buffer.from([byte]));
    const whole = q.peek(bytes.length);
    expect(whole.toString()).toBe('the quick brown fox');
    // One chunk holds them all: each read is a view of it (the same bytes), not a copy gathered from 19 views.
    const again = q.take(4);
    expect([again.buffer, again.byteOffset]).toEqual([whole.buffer, whole.byteOffset]);
    q.push(Buffer.from('!'));
    expect(q.take(16).toString()).toBe('quick brown fox!');
  });

  // Random chunk sizes around the joining threshold and random reads, against a plain Buffer. Replay
  // with MUSTER_ADVERSARIAL_SEED; the views a read returned must keep their bytes whatever comes after.
  const seed = Number(process.env.MUSTER_ADVERSARIAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
  it(`reads what was pushed, with chunks of every size (seed ${seed})`, () => {
    const random = seeded(seed);
    const q = new ByteQueue();
    let expected = Buffer.alloc(0);
    const taken: [Buffer, string][] = [];
    for (let step = 0; step < 5000; step++) {
      const size = [0, 1, 2, 7, 500, 1023, 1024, 3000, 5000][random.int(9)]!;
      if (random.int(3) > 0) {
        const chunk = random.bytes(size);
        q.push(chunk);
        expected = Buffer.concat([expected, chunk]);
      } else if (expected.length > 0) {
        const n = 1 + random.int(Math.min(expected.length, 6000));
        const what = random.int(4);
        if (what === 0) expect(q.byteAt(n - 1)).toBe(expected[n - 1]);
        else if (what === 1) expect(q.peek(n).equals(expected.subarray(0, n))).toBe(true);
        else {
          const read = what === 2 ? q.take(n) : (q.skip(n), undefined);
          if (read) {
            expect(read.equals(expected.subarray(0, n))).toBe(true);
            taken.push([read, read.toString('hex')]);
          }
          expected = expected.subarray(n);
        }
      }
      expect(q.length).toBe(expected.length);
    }
    for (const [view, hex] of taken) expect(view.toString('hex')).toBe(hex);
  });

  it('refuses reads past what it holds', () => {
    expect(() => filled().take(9)).toThrow(RangeError);
    expect(() => filled().skip(9)).toThrow(RangeError);
  });
});
