import { describe, expect, it } from '@jest/globals';
import { decodeFrameHeader, encodeFrame, FrameDecoder, FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import { FrameTooLargeError, ProtocolError, UnsupportedVersionError } from '../../src/protocol/errors.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

const options: Frame = { version: 4, response: false, flags: 0, stream: 0, opcode: Opcode.OPTIONS, body: Buffer.alloc(0) };
const query: Frame = {
  version: 4,
  response: false,
  flags: FrameFlag.TRACING,
  stream: 0x1234,
  opcode: Opcode.QUERY,
  body: Buffer.from('0123456789abcdef'),
};
const event: Frame = { version: 5, response: true, flags: 0, stream: -1, opcode: Opcode.EVENT, body: hex('0001') };

describe('frame header', () => {
  it('lays out version+direction, flags, int16 stream, opcode, length', () => {
    expect(encodeFrame(options).toString('hex')).toBe('040000000500000000');
    expect(encodeFrame(event).toString('hex')).toBe('8500ffff0c000000020001');
    expect(decodeFrameHeader(hex('8500ffff0c00000002'))).toEqual({
      version: 5,
      response: true,
      flags: 0,
      stream: -1,
      opcode: Opcode.EVENT,
      length: 2,
    });
  });

  it('reports v1/v2 headers with their one-byte stream', () => {
    const err = (() => {
      try {
        decodeFrameHeader(hex('0100050500000000 00'));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(UnsupportedVersionError);
    expect(err).toMatchObject({ version: 1, stream: 5 });
  });
});

describe('FrameDecoder', () => {
  const wire = Buffer.concat([encodeFrame(options), encodeFrame(query), encodeFrame(event)]);

  it('decodes frames in one chunk as views of it', () => {
    const frames = new FrameDecoder().push(wire);
    expect(frames).toEqual([options, query, event]);
    // A view of the chunk, not a copy: same memory, right after OPTIONS (9 bytes) and its own header.
    expect(frames[1]?.body.buffer).toBe(wire.buffer);
    expect(frames[1]?.body.byteOffset).toBe(wire.byteOffset + 18);
  });

  it('decodes the same frames whichever byte the stream is split at', () => {
    for (let at = 0; at <= wire.length; at++) {
      const decoder = new FrameDecoder();
      const frames = [...decoder.push(wire.subarray(0, at)), ...decoder.push(wire.subarray(at))];
      expect(frames).toEqual([options, query, event]);
      expect(decoder.buffered).toBe(0);
    }
  });

  it('decodes the same frames fed one byte at a time', () => {
    const decoder = new FrameDecoder();
    const frames: Frame[] = [];
    for (const byte of wire) frames.push(...decoder.push(Buffer.from([byte])));
    expect(frames).toEqual([options, query, event]);
  });

  it('refuses a body over the maximum before buffering it, and stays failed', () => {
    const decoder = new FrameDecoder({ maxBodyLength: 15 });
    expect(() => decoder.push(encodeFrame(query).subarray(0, 9))).toThrow(/body length 16/);
    expect(() => new FrameDecoder({ maxBodyLength: 15 }).push(encodeFrame(query))).toThrow(
      expect.objectContaining({ version: 4, stream: 0x1234, length: 16 }),
    );
    expect(() => decoder.push(encodeFrame(options))).toThrow(ProtocolError);
  });

  it('refuses a negative body length', () => {
    expect(() => new FrameDecoder().push(hex('040000000780000000'))).toThrow(FrameTooLargeError);
  });

  it('reports a v2 client after three bytes', () => {
    expect(() => new FrameDecoder().push(hex('020007'))).toThrow(UnsupportedVersionError);
  });

  it('never throws anything but ProtocolError on garbage', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 16) & 0xff;
    for (let i = 0; i < 500; i++) {
      const decoder = new FrameDecoder({ maxBodyLength: 1024 });
      const garbage = Buffer.from(Array.from({ length: 64 }, random));
      try {
        decoder.push(garbage);
      } catch (e) {
        expect(ProtocolError.is(e)).toBe(true);
      }
    }
  });
});
