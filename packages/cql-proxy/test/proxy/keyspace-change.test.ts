// Which forwarded answers switch the connection's keyspace (the proxy judges unqualified names by it).
import { describe, expect, it } from '@jest/globals';
import { lz4 } from '../../src/protocol/compression.js';
import { openFrame } from '../../src/protocol/envelope.js';
import { FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeResult } from '../../src/protocol/result.js';
import { Writer } from '../../src/protocol/writer.js';
import { keyspaceSet } from '../../src/proxy/keyspace-change.js';

const frame = (body: Buffer, flags = 0, opcode: number = Opcode.RESULT): Frame => ({
  version: 4,
  response: true,
  flags,
  stream: 1,
  opcode,
  body,
});
const open = (f: Frame) => openFrame(f, lz4).message;
const setKeyspace = encodeResult({ kind: 'Set_keyspace', keyspace: 'system' }, 4);

describe('keyspaceSet', () => {
  it('reads a Set_keyspace result, plain, compressed or behind warnings (a prepared USE is answered with one)', () => {
    expect(keyspaceSet(frame(setKeyspace), open)).toBe('system');
    expect(keyspaceSet(frame(lz4.compress(setKeyspace), FrameFlag.COMPRESSION), open)).toBe('system');
    const warned = Buffer.concat([new Writer().writeStringList(['`USE <keyspace>` with prepared statements is …']).finish(), setKeyspace]);
    expect(keyspaceSet(frame(warned, FrameFlag.WARNING), open)).toBe('system');
  });

  it('anything else is no keyspace change, and a large compressed body is not inflated', () => {
    expect(keyspaceSet(frame(encodeResult({ kind: 'Void' }, 4)), open)).toBeUndefined();
    expect(keyspaceSet(frame(setKeyspace, 0, Opcode.ERROR), open)).toBeUndefined();
    let inflated = 0;
    const counting = (f: Frame) => {
      inflated++;
      return open(f);
    };
    expect(keyspaceSet(frame(Buffer.alloc(4096), FrameFlag.COMPRESSION), counting)).toBeUndefined();
    expect(inflated).toBe(0);
    expect(keyspaceSet(frame(Buffer.alloc(10), FrameFlag.COMPRESSION), () => Buffer.alloc(0).readInt32BE(0) as never)).toBeUndefined();
  });
});
