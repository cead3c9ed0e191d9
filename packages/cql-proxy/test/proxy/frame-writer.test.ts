// The writer's batching: frames written in one turn leave in one corked burst, segments pack together.
import { describe, expect, it } from '@jest/globals';
import type { Socket } from 'node:net';
import { encodeFrameHeader, Opcode } from '../../src/protocol/frame.js';
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
  it('sends every frame written in one turn in a single corked burst, and nothing before the turn ends', async () => {
    const { socket, calls, bursts } = recordingSocket();
    const writer = new FrameWriter(socket);
    for (let i = 0; i < 5; i++) {
      const f = frame(i, `row ${i}`);
      writer.write(f.header, f.body);
    }
    expect(bursts).toHaveLength(0);
    await nextTurn();
    expect(calls.filter((c) => c === 'cork')).toHaveLength(1);
    expect(bursts).toHaveLength(1);
    expect(Buffer.concat(bursts[0]!).length).toBe(5 * (9 + 'row 0'.length));
    const g = frame(9, 'later');
    writer.write(g.header, g.body);
    await nextTurn();
    expect(bursts).toHaveLength(2);
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
