import { describe, expect, it } from '@jest/globals';
import {
  describeVersions,
  isSupportedVersion,
  nextVersionDown,
  refusesVersion,
  replyVersion,
  unsupportedVersionReply,
} from '../../src/protocol/version.js';
import { decodeFrameHeader, FrameDecoder, Opcode } from '../../src/protocol/frame.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { ErrorCode, UnsupportedVersionError } from '../../src/protocol/errors.js';

describe('version negotiation', () => {
  it('supports 3, 4 and 5', () => {
    expect([1, 2, 3, 4, 5, 6, 0x41, 0x42].filter((v) => isSupportedVersion(v))).toEqual([3, 4, 5]);
    expect(describeVersions()).toEqual(['3/v3', '4/v4', '5/v5']);
  });

  it("answers cassandra-driver's opening 0x42 with a v5 PROTOCOL_ERROR on stream 0", () => {
    const reply = unsupportedVersionReply(0x42);
    const [frame] = new FrameDecoder().push(reply);
    expect(frame).toMatchObject({ version: 5, response: true, stream: 0, opcode: Opcode.ERROR });
    const error = decodeError(frame?.body ?? Buffer.alloc(0));
    expect(error).toEqual({
      code: ErrorCode.PROTOCOL_ERROR,
      message: 'Invalid or unsupported protocol version (66); supported versions are (3/v3, 4/v4, 5/v5)',
    });
    expect(refusesVersion(error)).toBe(true);
  });

  it('answers in the highest allowed version below the request, honouring a block list', () => {
    expect(replyVersion(6)).toBe(5);
    expect(replyVersion(5, [3, 4])).toBe(4);
    const [frame] = new FrameDecoder().push(unsupportedVersionReply(5, 7, [3, 4]));
    expect(frame).toMatchObject({ version: 4, stream: 7 });
  });

  it('answers a v1/v2 client in its own 8-byte header layout', () => {
    const reply = unsupportedVersionReply(2, 3);
    expect(reply.subarray(0, 4).toString('hex')).toBe('82000300');
    expect(reply.readInt32BE(4)).toBe(reply.length - 8);
    expect(decodeError(reply.subarray(8)).message).toMatch(/^Invalid or unsupported protocol version \(2\)/);
    expect(() => decodeFrameHeader(reply)).toThrow(UnsupportedVersionError);
  });

  it('steps down with a backend', () => {
    expect(nextVersionDown(5, 4)).toBe(4);
    expect(nextVersionDown(5, 5)).toBe(4);
    expect(nextVersionDown(5, 0x42)).toBe(4);
    expect(nextVersionDown(4, undefined)).toBe(3);
    expect(nextVersionDown(3, 3)).toBeUndefined();
  });
});
