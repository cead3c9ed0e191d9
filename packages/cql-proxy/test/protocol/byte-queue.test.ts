import { describe, expect, it } from '@jest/globals';
import { ByteQueue } from '../../src/protocol/byte-queue.js';

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
    const chunk = Buffer.alloc(6); // unpooled, so its ArrayBuffer is its own
    chunk.write('abcdef');
    q.push(chunk);
    q.push(Buffer.from('gh'));
    expect(q.take(3).buffer).toBe(chunk.buffer);
    const spanning = q.take(4);
    expect(spanning.toString()).toBe('defg');
    expect(spanning.buffer).not.toBe(chunk.buffer);
    q.skip(1);
    expect(q.length).toBe(0);
  });

  it('refuses reads past what it holds', () => {
    expect(() => filled().take(9)).toThrow(RangeError);
    expect(() => filled().skip(9)).toThrow(RangeError);
  });
});
