import { describe, expect, it } from '@jest/globals';
import { FrameFlag, Opcode } from '../../src/protocol/frame.js';
import { checkForwardedRequest } from '../../src/protocol/request-check.js';
import { requestMessage } from '../../src/protocol/request-message.js';
import { encodeBatch, encodeExecute, encodeQuery, encodePrepare } from '../../src/protocol/requests.js';
import { ProtocolError } from '../../src/protocol/errors.js';

const int = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const short = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const frame = (version: number, flags: number, body: Buffer) => ({
  version,
  flags,
  stream: 1,
  opcode: Opcode.QUERY,
  response: false,
  body,
});
const longString = (s: string) => Buffer.concat([int(Buffer.byteLength(s)), Buffer.from(s)]);

describe('checkForwardedRequest', () => {
  it('accepts what the encoders write, in every version', () => {
    for (const version of [3, 4, 5]) {
      const values = [Buffer.from('a'), null, Buffer.alloc(300)];
      const parameters = { consistency: 1, values, pageSize: 100, pagingState: Buffer.from('p'), timestamp: 5n };
      checkForwardedRequest(Opcode.QUERY, encodeQuery({ query: 'SELECT * FROM t WHERE k = ?', parameters }, version), version);
      const execute = encodeExecute(
        { id: Buffer.alloc(16, 1), ...(version >= 5 ? { resultMetadataId: Buffer.alloc(16, 2) } : {}), parameters },
        version,
      );
      checkForwardedRequest(Opcode.EXECUTE, execute, version);
      const batch = encodeBatch(
        {
          type: 0,
          consistency: 1,
          statements: [
            { kind: 'query', query: 'INSERT INTO t (k) VALUES (?)', values: [Buffer.from('x')] },
            { kind: 'prepared', id: Buffer.alloc(16), values: [null] },
          ],
          timestamp: 1n,
        },
        version,
      );
      checkForwardedRequest(Opcode.BATCH, batch, version);
      checkForwardedRequest(Opcode.PREPARE, encodePrepare({ query: 'SELECT 1 FROM t' }, version), version);
    }
  });

  // Cassandra allocates a value's declared length before checking the body holds it: a tiny
  // frame declaring a 2 GiB value is an OutOfMemoryError in the node. None may pass.
  it('refuses a value longer than the body (a QUERY, EXECUTE, BATCH, payload or token that would make the node allocate it)', () => {
    const huge = int(0x7fffffff);
    const query = Buffer.concat([longString('INSERT INTO t (k) VALUES (?)'), short(1), Buffer.from([0x01]), short(1), huge]);
    expect(() => checkForwardedRequest(Opcode.QUERY, query, 4)).toThrow(/Truncated \[value\]/);
    const execute = Buffer.concat([short(2), Buffer.from('id'), short(1), Buffer.from([0x01]), short(1), huge]);
    expect(() => checkForwardedRequest(Opcode.EXECUTE, execute, 4)).toThrow(ProtocolError);
    const batch = Buffer.concat([Buffer.from([0]), short(1), Buffer.from([0]), longString('INSERT'), short(1), huge]);
    expect(() => checkForwardedRequest(Opcode.BATCH, batch, 4)).toThrow(ProtocolError);
    // The custom payload map in front of the message is read (and bounds-checked) by requestMessage.
    const payload = Buffer.concat([short(1), short(1), Buffer.from('k'), huge]);
    expect(() => requestMessage(frame(4, FrameFlag.CUSTOM_PAYLOAD, Buffer.concat([payload, query])), undefined, 1 << 24)).toThrow(
      ProtocolError,
    );
    expect(() => checkForwardedRequest(Opcode.AUTH_RESPONSE, huge, 4)).toThrow(ProtocolError);
  });

  it('refuses other lies: negative lengths, unknown batch kinds, truncation, a payload in v3', () => {
    expect(() => checkForwardedRequest(Opcode.QUERY, int(-5), 4)).toThrow(/Negative/);
    const badValue = Buffer.concat([longString('SELECT'), short(1), Buffer.from([0x01]), short(1), int(-3)]);
    expect(() => checkForwardedRequest(Opcode.QUERY, badValue, 4)).toThrow(/Invalid \[value\] length -3/);
    const kind = Buffer.concat([Buffer.from([0]), short(1), Buffer.from([7])]);
    expect(() => checkForwardedRequest(Opcode.BATCH, kind, 4)).toThrow(/kind 7/);
    expect(() => checkForwardedRequest(Opcode.QUERY, longString('SELECT').subarray(0, 6), 4)).toThrow(/Truncated/);
    // The checks step over fields without reading them (no views, no bigint): still bounds-checked.
    const shortTimestamp = Buffer.concat([short(2), Buffer.from([1, 2]), short(1), Buffer.from([0x20]), Buffer.alloc(7)]);
    expect(() => checkForwardedRequest(Opcode.EXECUTE, shortTimestamp, 4)).toThrow(/Truncated \[long\] at offset 7: needs 8 bytes, 7 left/);
    const shortId = Buffer.concat([short(16), Buffer.alloc(15)]);
    expect(() => checkForwardedRequest(Opcode.EXECUTE, shortId, 4)).toThrow(/Truncated \[short bytes\] at offset 2/);
    const nullAndUnset = Buffer.concat([longString('INSERT'), short(1), Buffer.from([0x01]), short(2), int(-1), int(-2)]);
    expect(() => checkForwardedRequest(Opcode.QUERY, nullAndUnset, 4)).not.toThrow();
    expect(() => requestMessage(frame(3, FrameFlag.CUSTOM_PAYLOAD, Buffer.alloc(8)), undefined, 1 << 24)).toThrow(/v4 or later/);
  });
});
