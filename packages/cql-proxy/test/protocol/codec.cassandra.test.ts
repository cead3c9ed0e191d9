// The codec against a real Cassandra (the testenv one), with no proxy in between: what it encodes
// is accepted, what Cassandra sends decodes, and our version refusal has Cassandra's shape.
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeCell } from '../../src/protocol/cells.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { encodeFrame, FrameDecoder, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult } from '../../src/protocol/result.js';
import { encodeSegments, SegmentedFrameDecoder } from '../../src/protocol/segment.js';
import { openFrame, sealFrame } from '../../src/protocol/envelope.js';
import { frameCompression } from '../../src/protocol/compression.js';
import { unsupportedVersionReply } from '../../src/protocol/version.js';

const server = testServer<{ host: string; nativePort: number; version: string }>('cassandra');

/** A raw connection: legacy frames until `segments()` is called, then v5 segments. */
class Raw {
  private decoder: { push(chunk: Buffer): Frame[] } = new FrameDecoder();
  private frames: Frame[] = [];
  private waiters: (() => void)[] = [];
  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.frames.push(...this.decoder.push(chunk));
      for (const w of this.waiters.splice(0)) w();
    });
  }
  static async open(): Promise<Raw> {
    const socket = connect(server!.nativePort, server!.host);
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new Raw(socket);
  }
  write(bytes: Buffer | Buffer[]): void {
    for (const b of Array.isArray(bytes) ? bytes : [bytes]) this.socket.write(b);
  }
  segments(lz4: boolean): void {
    this.decoder = new SegmentedFrameDecoder({ lz4 });
  }
  async next(): Promise<Frame> {
    const deadline = Date.now() + 10_000;
    while (this.frames.length === 0) {
      if (Date.now() > deadline) throw new Error('no frame from Cassandra within 10 s');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
    return this.frames.shift() as Frame;
  }
  close(): void {
    this.socket.destroy();
  }
}

/** Writes `bytes` on a fresh connection and returns what comes back within `ms` (or until close). */
async function exchange(bytes: Buffer, ms = 1500): Promise<Buffer> {
  const socket = connect(server!.nativePort, server!.host, () => socket.write(bytes));
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', () => resolve());
  });
  socket.destroy();
  return Buffer.concat(chunks);
}

const request = (version: number, stream: number, opcode: number, body: Buffer): Frame => ({
  version,
  response: false,
  flags: 0,
  stream,
  opcode,
  body,
});
const query = (version: number) =>
  encodeQuery({ query: 'SELECT release_version, tokens FROM system.local', parameters: { consistency: Consistency.ONE } }, version);

function releaseVersion(frame: Frame, version: number, body = frame.body): unknown {
  if (frame.opcode === Opcode.ERROR) throw new Error(decodeError(body).message);
  const result = decodeResult(body, version);
  if (result.kind !== 'Rows' || !result.metadata.columns) throw new Error(`expected rows with metadata, got ${result.kind}`);
  return decodeCell(result.metadata.columns[0]!.type, result.rows[0]![0]!);
}

(server ? describe : describe.skip)('the codec against Cassandra', () => {
  it.each([
    ['0x42 (cassandra-driver opening)', 0x42, 9],
    ['v2', 2, 8],
  ])('refuses %s exactly as our unsupportedVersionReply does', async (_, version, headerLength) => {
    const theirs = await exchange(
      version >= 3 ? Buffer.from([version, 0, 0, 5, Opcode.OPTIONS, 0, 0, 0, 0]) : Buffer.from([version, 0, 5, Opcode.OPTIONS, 0, 0, 0, 0]),
    );
    const ours = unsupportedVersionReply(version);
    // Same header (version, flags, stream 0, opcode) and the same message up to the version list.
    expect(theirs.subarray(0, headerLength - 4)).toEqual(ours.subarray(0, headerLength - 4));
    const message = (b: Buffer) => decodeError(b.subarray(headerLength)).message.replace(/supported versions are .*/, '');
    expect(message(theirs)).toBe(message(ours));
  });

  it.each([3, 4])('v%i with lz4 and snappy frame compression', async (version) => {
    for (const name of ['lz4', 'snappy']) {
      const compression = frameCompression(name)!;
      const c = await Raw.open();
      c.write(
        encodeFrame(
          request(
            version,
            1,
            Opcode.STARTUP,
            encodeStartup({
              options: new Map([
                ['CQL_VERSION', '3.0.0'],
                ['COMPRESSION', name],
              ]),
            }),
          ),
        ),
      );
      expect((await c.next()).opcode).toBe(Opcode.READY);
      c.write(encodeFrame(sealFrame({ version, response: false, stream: 2, opcode: Opcode.QUERY }, {}, query(version), compression, 0)));
      const frame = await c.next();
      expect(releaseVersion(frame, version, openFrame(frame, compression).message)).toBe(server!.version);
      c.close();
    }
  });

  it.each([false, true])('v5 segments (lz4: %s)', async (lz4) => {
    const c = await Raw.open();
    const options = new Map([['CQL_VERSION', '3.0.0'], ...(lz4 ? [['COMPRESSION', 'lz4'] as [string, string]] : [])]);
    c.write(encodeFrame(request(5, 1, Opcode.STARTUP, encodeStartup({ options }))));
    expect((await c.next()).opcode).toBe(Opcode.READY);
    c.segments(lz4);
    // Two envelopes in one self-contained segment, then one large enough to be split.
    const big = encodeQuery(
      { query: `SELECT release_version FROM system.local /* ${'x'.repeat(200_000)} */`, parameters: { consistency: 1 } },
      5,
    );
    c.write(
      encodeSegments([encodeFrame(request(5, 2, Opcode.QUERY, query(5))), encodeFrame(request(5, 3, Opcode.QUERY, query(5)))], { lz4 }),
    );
    c.write(encodeSegments([encodeFrame(request(5, 4, Opcode.QUERY, big))], { lz4 }));
    const replies = [await c.next(), await c.next(), await c.next()];
    expect(replies.map((f) => f.stream).sort()).toEqual([2, 3, 4]);
    for (const f of replies) expect(releaseVersion(f, 5)).toBe(server!.version);
    c.close();
  });
});
