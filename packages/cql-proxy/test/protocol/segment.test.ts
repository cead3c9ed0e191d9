import { describe, expect, it } from '@jest/globals';
import { crc24, crc32 } from '../../src/protocol/crc.js';
import {
  encodeSegment,
  encodeSegmentHeader,
  encodeSegments,
  MAX_SEGMENT_PAYLOAD,
  SegmentDecoder,
  SegmentedFrameDecoder,
  type Segment,
} from '../../src/protocol/segment.js';
import { encodeFrame, FrameDecoder, Opcode, type Frame } from '../../src/protocol/frame.js';
import { ProtocolError } from '../../src/protocol/errors.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const wire = (pieces: Buffer[]) => Buffer.concat(pieces);

// Vectors from an independent implementation: the DataStax native-protocol library's segment
// codec tests (Java driver 4.x), which it checks against Cassandra 4.
describe('v5 segment checksums', () => {
  it('CRC24 of an uncompressed header {length 5, self-contained}', () => {
    expect(encodeSegmentHeader(false, 5, 0, true).toString('hex')).toBe('050002' + '19999a');
    expect(crc24(hex('050002'))).toBe(0x9a9919);
  });

  it('CRC24 of lz4 headers {5 compressed, 12 uncompressed} and {5, 2^17-1}', () => {
    expect(encodeSegmentHeader(true, 5, 12, true).toString('hex')).toBe('0500180004' + '9e0838');
    expect(encodeSegmentHeader(true, 5, MAX_SEGMENT_PAYLOAD, true).toString('hex')).toBe('0500feff07' + 'ae6cdc');
  });

  it('CRC32 of the payload 01, primed with FA 2D 55 CA, little-endian on the wire', () => {
    expect(crc32(hex('01'))).toBe(0xba9b2b0b);
    expect(
      encodeSegment([hex('01')], true)
        .at(-1)
        ?.toString('hex'),
    ).toBe('0b2b9bba');
    expect(crc32(hex('0102'), hex('03'))).toBe(crc32(hex('010203')));
  });
});

const frame = (stream: number, size: number): Frame => ({
  version: 5,
  response: true,
  flags: 0,
  stream,
  opcode: Opcode.RESULT,
  body: Buffer.alloc(size, stream & 0xff),
});

describe.each([false, true])('segments (lz4: %s)', (lz4) => {
  const options = { lz4 };

  it('round-trip small, empty and incompressible payloads', () => {
    const payloads = [
      Buffer.alloc(0),
      Buffer.from('abc'),
      Buffer.alloc(1000, 1),
      Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 7919) & 0xff)),
    ];
    const bytes = wire(payloads.flatMap((p, i) => encodeSegment([p], i % 2 === 0, options)));
    const segments = new SegmentDecoder(options).push(bytes);
    expect(segments).toEqual(payloads.map((payload, i): Segment => ({ payload, selfContained: i % 2 === 0 })));
  });

  it('pack small envelopes together and split a large one across non-self-contained segments', () => {
    const frames = [frame(1, 10), frame(2, 300_000), frame(3, 20), frame(4, MAX_SEGMENT_PAYLOAD - 9)];
    const bytes = wire(encodeSegments(frames.map(encodeFrame), options));
    const segments = new SegmentDecoder(options).push(bytes);
    expect(segments.map((s) => s.selfContained)).toEqual([true, false, false, false, true, true]);
    expect(segments.every((s) => s.payload.length <= MAX_SEGMENT_PAYLOAD)).toBe(true);
    expect(new SegmentedFrameDecoder(options).push(bytes)).toEqual(frames);
  });

  it('decode the same whichever byte the stream is split at', () => {
    const frames = [frame(1, 3), frame(2, 40), frame(-1, 0)];
    const bytes = wire(
      encodeSegments([encodeFrame(frames[0] as Frame)], options).concat(encodeSegments(frames.slice(1).map(encodeFrame), options)),
    );
    for (let at = 0; at <= bytes.length; at++) {
      const decoder = new SegmentedFrameDecoder(options);
      expect([...decoder.push(bytes.subarray(0, at)), ...decoder.push(bytes.subarray(at))]).toEqual(frames);
    }
  });

  it('refuse a corrupted header, payload or trailer and stay failed', () => {
    const bytes = wire(encodeSegment([Buffer.from('hello world, hello world')], true, options));
    for (const at of [0, 2, bytes.length - 8, bytes.length - 1]) {
      const bad = Buffer.from(bytes);
      bad[at] = (bad[at] as number) ^ 0x01;
      const decoder = new SegmentDecoder(options);
      expect(() => decoder.push(bad)).toThrow(/CRC(24|32) mismatch/);
      expect(() => decoder.push(bytes)).toThrow(ProtocolError);
    }
  });

  it('refuse a self-contained segment that cuts an envelope', () => {
    const envelope = encodeFrame(frame(1, 10));
    const bytes = wire(encodeSegment([envelope.subarray(0, 12)], true, options));
    expect(() => new SegmentedFrameDecoder(options).push(bytes)).toThrow(/ended inside an envelope/);
  });

  it('enforce the maximum envelope size across split segments', () => {
    const bytes = wire(encodeSegments([encodeFrame(frame(1, 300_000))], options));
    expect(() => new SegmentedFrameDecoder({ ...options, maxBodyLength: 200_000 }).push(bytes)).toThrow(/body length 300000/);
  });
});

it('hands bytes pipelined behind STARTUP over to the segment decoder', () => {
  const startup = encodeFrame({ version: 5, response: false, flags: 0, stream: 0, opcode: Opcode.STARTUP, body: Buffer.alloc(2) });
  const query = frame(1, 30);
  const stream = Buffer.concat([startup, ...encodeSegments([encodeFrame(query)])]);
  const legacy = new FrameDecoder();
  expect(legacy.push(stream.subarray(0, startup.length + 5))).toHaveLength(1);
  const modern = new SegmentedFrameDecoder();
  expect([...modern.push(legacy.takeBuffered()), ...modern.push(stream.subarray(startup.length + 5))]).toEqual([query]);
  expect(legacy.buffered).toBe(0);
});

it('an lz4 segment compresses when it pays, and says so in the header', () => {
  const [header, payload] = encodeSegment([Buffer.alloc(10000, 0x61)], true, { lz4: true });
  expect(payload?.length).toBeLessThan(100);
  expect(header?.readUInt32LE(0)).toBe(((payload?.length ?? 0) | (10000 << 17)) >>> 0);
});
