// Which forwarded answers switch the connection's keyspace (the proxy judges unqualified names by it).
import { describe, expect, it } from '@jest/globals';
import { lz4 } from '../../src/protocol/compression.js';
import { openFrame } from '../../src/protocol/envelope.js';
import { FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeResult } from '../../src/protocol/result.js';
import { Writer } from '../../src/protocol/writer.js';
import { KeyspaceInUse, keyspaceSet, useTarget } from '../../src/proxy/keyspace-change.js';

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

describe('the keyspace unqualified names are judged by', () => {
  it('reads the target of a USE', () => {
    expect(useTarget('USE system')).toBe('system');
    expect(useTarget('/* c */ use "System_Views";')).toBe('System_Views');
    expect(useTarget('use SYSTEM_VIEWS')).toBe('system_views');
    expect(useTarget('SELECT * FROM system.peers')).toBeUndefined();
    expect(useTarget("USE 'x")).toBeUndefined();
    // Whatever the first character: blanks, comments, a capital or the u of another verb.
    expect(useTarget(' \tUSE system')).toBe('system');
    expect(useTarget('-- c\r\nUsE system')).toBe('system');
    expect(useTarget('// c\nuse system')).toBe('system');
    expect(useTarget('UPDATE system.local SET x = 1')).toBeUndefined();
    expect(useTarget('INSERT INTO t (k) VALUES (1)')).toBeUndefined();
  });

  it('a USE of a system keyspace counts from when it is forwarded, others from their answer', () => {
    const keyspace = new KeyspaceInUse();
    const toSystem = {};
    keyspace.forwarding(toSystem, 'USE system');
    expect(keyspace.current).toBe('system');
    keyspace.answered(toSystem, frame(setKeyspace), open);
    expect(keyspace.current).toBe('system');
    const toKs = {};
    keyspace.forwarding(toKs, 'USE ks');
    expect(keyspace.current).toBe('system');
    keyspace.answered(toKs, frame(encodeResult({ kind: 'Set_keyspace', keyspace: 'ks' }, 4)), open);
    expect(keyspace.current).toBe('ks');
    // A USE of system the backend refused leaves the keyspace as it was.
    const refused = {};
    keyspace.forwarding(refused, 'USE system_views');
    expect(keyspace.current).toBe('system_views');
    keyspace.answered(refused, frame(encodeError({ code: ErrorCode.INVALID, message: 'no' }), 0, Opcode.ERROR), open);
    expect(keyspace.current).toBe('ks');
    // (review) One that failed in the proxy (a timeout) may have run on the backend all the same:
    // its Set_keyspace, late, is dropped with its stream id. Names stay judged in system_views.
    const timedOut = {};
    keyspace.forwarding(timedOut, 'USE system_views');
    keyspace.answered(timedOut, undefined, open);
    expect(keyspace.current).toBe('system_views');
    const back = {};
    keyspace.forwarding(back, 'USE ks');
    keyspace.answered(back, frame(encodeResult({ kind: 'Set_keyspace', keyspace: 'ks' }, 4)), open);
    expect(keyspace.current).toBe('ks');
  });
});
