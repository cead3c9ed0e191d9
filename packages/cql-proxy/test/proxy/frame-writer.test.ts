// The writer's batching: frames written in one turn leave in one write (large bodies by reference), segments pack together.
import { describe, expect, it } from '@jest/globals';
import type { Socket } from 'node:net';
import { encodeFrameHeader, FrameDecoder, Opcode } from '../../src/protocol/frame.js';
import { SegmentedFrameDecoder } from '../../src/protocol/segment.js';
import { FrameWriter } from '../../src/proxy/frame-writer.js';

/** Records what a socket is asked to do; `bursts` are the writes between a cork and its uncork. */
function recordingSocket() {
  const calls: string[] = [];
  const bursts: Buffer[][] = [];
  let corked = 0;
  const current: Buffer[] = [];
  const socket = {
    cork() {
      corked++;
      calls.push('cork');
    },
    uncork() {
      corked--;
      calls.push('uncork');
      if (corked === 0) bursts.push(current.splice(0));
    },
    write(chunk: Buffer) {
      calls.push('write');
      if (corked === 0) bursts.push([chunk]);
      else current.push(chunk);
      return true;
    },
  };
  return { socket: socket as unknown as Socket, calls, bursts };
}

const frame = (stream: number, body: string) => ({
  header: encodeFrameHeader({ version: 4, response: true, flags: 0, stream, opcode: Opcode.RESULT }, Buffer.byteLength(body)),
  body: Buffer.from(body),
});
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('FrameWriter', () => {
  it('sends every frame written in one turn as one buffer in one write, and nothing before the turn ends', async () => {
    const { socket, calls, bursts } = recordingSocket();
    const writer = new FrameWriter(socket);
    for (let i = 0; i < 5; i++) writer.frame(4, true, 0, i, Opcode.RESULT, Buffer.from(`row ${i}`));
    expect(bursts).toHaveLength(0);
    await nextTurn();
    expect(calls).toEqual(['write']);
    expect(bursts).toHaveLength(1);
    expect(bursts[0]).toHaveLength(1);
    const decoded = new FrameDecoder().push(bursts[0]![0]!);
    expect(decoded.map((d) => [d.version, d.response, d.stream, d.opcode, d.body.toString()])).toEqual(
      [0, 1, 2, 3, 4].map((i) => [4, true, i, Opcode.RESULT, `row ${i}`]),
    );
    writer.frame(4, true, 0, 9, Opcode.RESULT, Buffer.from('later'));
    await nextTurn();
    expect(bursts).toHaveLength(2);
  });

  it('writes a header the same as encodeFrameHeader, negative streams and flags included', async () => {
    const { socket, bursts } = recordingSocket();
    const writer = new FrameWriter(socket);
    const body = Buffer.from('event');
    writer.frame(5, true, 0x0a, -1, Opcode.EVENT, body);
    writer.frame(3, false, 0x01, 32767, Opcode.EXECUTE, Buffer.alloc(0));
    await nextTurn();
    const expected = Buffer.concat([
      encodeFrameHeader({ version: 5, response: true, flags: 0x0a, stream: -1, opcode: Opcode.EVENT }, body.length),
      body,
      encodeFrameHeader({ version: 3, response: false, flags: 0x01, stream: 32767, opcode: Opcode.EXECUTE }, 0),
    ]);
    expect(Buffer.concat(bursts.flat())).toEqual(expected);
  });

  it('sends a large body as it is, not copied, between the small frames around it, in one corked burst', async () => {
    const { socket, calls, bursts } = recordingSocket();
    const writer = new FrameWriter(socket);
    const large = Buffer.alloc(100_000, 7);
    writer.frame(4, true, 0, 1, Opcode.RESULT, Buffer.from('before'));
    writer.frame(4, true, 0, 2, Opcode.RESULT, large);
    writer.frame(4, true, 0, 3, Opcode.RESULT, Buffer.from('after'));
    const raw = frame(4, 'raw');
    writer.write(raw.header, raw.body);
    await nextTurn();
    expect(calls[0]).toBe('cork');
    expect(calls.at(-1)).toBe('uncork');
    expect(bursts).toHaveLength(1);
    expect(bursts[0]!.some((piece) => piece === large)).toBe(true);
    const decoded = new FrameDecoder({ maxBodyLength: 200_000 }).push(Buffer.concat(bursts[0]!));
    expect(decoded.map((d) => [d.stream, d.body.length])).toEqual([
      [1, 6],
      [2, 100_000],
      [3, 5],
      [4, 3],
    ]);
    expect(decoded[1]!.body.equals(large)).toBe(true);
  });

  it('flush() sends at once (before end()), and the scheduled flush then does nothing', async () => {
    const { socket, bursts } = recordingSocket();
    const writer = new FrameWriter(socket);
    const f = frame(1, 'x');
    writer.write(f.header, f.body);
    writer.flush();
    expect(bursts).toHaveLength(1);
    await nextTurn();
    expect(bursts).toHaveLength(1);
  });

  it('after useSegments, the frames of a turn are packed into one segment the v5 decoder reads back in order', async () => {
    for (const lz4 of [false, true]) {
      const { socket, bursts } = recordingSocket();
      const writer = new FrameWriter(socket);
      const ready = frame(0, '');
      writer.write(ready.header, ready.body); // the answer to STARTUP: still plain framing
      writer.useSegments(lz4);
      const frames = [frame(1, 'a'.repeat(100)), frame(2, 'b'), frame(3, 'c'.repeat(3000))];
      for (const f of frames) writer.write(f.header, f.body);
      await nextTurn();
      const bytes = Buffer.concat(bursts.flat());
      expect(bytes.subarray(0, 9)).toEqual(ready.header);
      const decoded = new SegmentedFrameDecoder({ lz4 }).push(bytes.subarray(9));
      expect(decoded.map((d) => [d.stream, d.body.toString()])).toEqual(frames.map((f, i) => [i + 1, f.body.toString()]));
      // One segment: its 3-byte length field (17 bits) covers all three envelopes.
      const payload = frames.reduce((n, f) => n + 9 + f.body.length, 0);
      if (!lz4) expect(bytes.length - 9).toBe(payload + 6 + 4);
    }
  });
});
