// Bad input never takes the proxy down: each bad connection gets a protocol error or a clean close,
// and a well-behaved client keeps being served throughout.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { decodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeFrameHeader, Opcode } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { seeded } from '../adversarial/cases.js';
import { adversarialBackend } from '../adversarial/proxy-process.js';
import { RawClient } from './raw-client.js';
import { startProxy, type RunningProxy } from './harness.js';

const backend = adversarialBackend();
const TIMEOUT = 120_000;
const startup = encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) });

(backend ? describe : describe.skip)('bad input', () => {
  let running: RunningProxy;
  let good: cassandra.Client;
  beforeAll(async () => {
    running = await startProxy(backend!, { proxy: { limits: { maxFrameBytes: 1024 * 1024 } } });
    good = new cassandra.Client({ contactPoints: [running.address], localDataCenter: backend!.localDataCenter });
    await good.connect();
  }, TIMEOUT);
  afterAll(async () => {
    await good?.shutdown();
    await running?.stop();
  });

  const stillServing = async () => expect((await good.execute('SELECT release_version FROM system.local')).rowLength).toBe(1);

  it('an unsupported version gets PROTOCOL_ERROR on its stream in a version it can read', async () => {
    for (const version of [1, 2]) {
      // v1/v2 read an 8-byte header (one-byte stream): the answer comes in that layout.
      const c = await RawClient.open(running.address);
      const replies: Buffer[] = [];
      c.socket.removeAllListeners('data');
      c.socket.on('data', (chunk: Buffer) => replies.push(chunk));
      c.socket.write(Buffer.from([version, 0, 3, Opcode.OPTIONS, 0, 0, 0, 0]));
      await new Promise((resolve) => c.socket.once('close', resolve));
      const reply = Buffer.concat(replies);
      expect([reply[0], reply[2], reply[3], reply.readInt32BE(4)]).toEqual([0x80 | version, 3, Opcode.ERROR, reply.length - 8]);
      expect(decodeError(reply.subarray(8)).message).toMatch(/Invalid or unsupported protocol version/);
    }
    for (const version of [6, 0x42, 0x7f]) {
      const c = await RawClient.open(running.address);
      c.socket.write(Buffer.concat([encodeFrameHeader({ version, response: false, flags: 0, stream: 3, opcode: Opcode.OPTIONS }, 0)]));
      const reply = await c.next();
      expect(reply?.opcode).toBe(Opcode.ERROR);
      expect(reply!.version).toBe(5);
      const error = decodeError(reply!.body);
      expect(error.code).toBe(ErrorCode.PROTOCOL_ERROR);
      expect(error.message).toMatch(/Invalid or unsupported protocol version/);
      c.close();
    }
    await stillServing();
  });

  it('an oversized frame is refused before its body is buffered', async () => {
    const c = await RawClient.open(running.address);
    c.socket.write(encodeFrameHeader({ version: 4, response: false, flags: 0, stream: 1, opcode: Opcode.QUERY }, 10 * 1024 * 1024));
    const reply = await c.next();
    expect(decodeError(reply!.body).message).toMatch(/outside 0\.\.1048576/);
    expect(await c.next()).toBeUndefined(); // then closed
    await stillServing();
  });

  it('unknown opcodes, response opcodes, requests before STARTUP, negative streams: errors, connection kept', async () => {
    const c = await RawClient.open(running.address);
    c.send(4, 1, Opcode.QUERY, encodeQuery({ query: 'SELECT * FROM system.local', parameters: { consistency: 1 } }, 4));
    expect(decodeError((await c.next(1))!.body).message).toMatch(/Unexpected message QUERY, expecting STARTUP or OPTIONS/);
    c.send(4, 2, Opcode.STARTUP, startup);
    expect((await c.next(2))?.opcode).toBe(Opcode.READY);
    for (const opcode of [0x04, 0x11, 0x7f, Opcode.RESULT, Opcode.READY]) {
      c.send(4, 3, opcode, Buffer.alloc(0));
      expect(decodeError((await c.next(3))!.body).code).toBe(ErrorCode.PROTOCOL_ERROR);
    }
    c.send(4, -5, Opcode.OPTIONS, Buffer.alloc(0));
    expect(decodeError((await c.next(-5))!.body).message).toMatch(/negative stream/);
    c.send(4, 4, Opcode.QUERY, Buffer.from([0, 0, 0, 99, 1])); // a long string longer than the body
    expect(decodeError((await c.next(4))!.body).code).toBe(ErrorCode.PROTOCOL_ERROR);
    c.send(4, 5, Opcode.OPTIONS, Buffer.alloc(0));
    expect((await c.next(5))?.opcode).toBe(Opcode.SUPPORTED);
    c.close();
    await stillServing();
  });

  it(
    'random and mutated frames, a fixed number of rounds',
    async () => {
      const valid = Buffer.concat([
        encodeFrameHeader({ version: 4, response: false, flags: 0, stream: 1, opcode: Opcode.STARTUP }, startup.length),
        startup,
      ]);
      // Seeded: MUSTER_BAD_INPUT_SEED replays a run (the adversarial suite's fuzz goes further).
      const seed = Number(process.env.MUSTER_BAD_INPUT_SEED ?? Date.now() % 2 ** 31);
      console.log(`bad-input random frames: seed ${seed} (MUSTER_BAD_INPUT_SEED=${seed} replays it)`);
      const random = seeded(seed);
      // A count, not a deadline: the same seed then replays exactly the same frames, however loaded
      // the machine is (a time-bounded loop also sent fewer frames the slower it ran).
      const rounds = 60;
      for (let round = 0; round < rounds; round++) {
        const c = await RawClient.open(running.address);
        const kind = round % 4;
        let bytes: Buffer;
        if (kind === 0) bytes = random.bytes(1 + random.int(64));
        else if (kind === 1) {
          bytes = Buffer.from(valid);
          for (let i = 0; i < 3; i++) bytes[random.int(bytes.length)] = random.int(256);
        } else if (kind === 2) bytes = valid.subarray(0, random.int(valid.length));
        else bytes = Buffer.concat([valid, random.bytes(32)]);
        c.socket.write(bytes);
        if (kind === 2) c.socket.end();
        // Either an answer, a close, or silence while a frame is incomplete: never a crash.
        await c.next(undefined, 300).catch(() => undefined);
        c.close();
      }
      await stillServing();
    },
    TIMEOUT,
  );
});

(backend ? describe : describe.skip)('connection limit', () => {
  it('a connection over maxClientConnections gets a CQL error it can read, then is closed', async () => {
    const running = await startProxy(backend!, { proxy: { limits: { maxClientConnections: 2 } } });
    const held = [await RawClient.open(running.address), await RawClient.open(running.address)];
    try {
      // The proxy counts a connection as soon as it is accepted.
      await new Promise((r) => setTimeout(r, 100));
      const third = await RawClient.open(running.address);
      third.send(4, 7, Opcode.OPTIONS, Buffer.alloc(0));
      const reply = await third.next(7);
      expect(reply?.opcode).toBe(Opcode.ERROR);
      expect(decodeError(reply!.body)).toMatchObject({ code: ErrorCode.OVERLOADED, message: 'Too many client connections (2)' });
      expect(await third.next(undefined, 3000)).toBeUndefined();
      held[0]!.send(4, 1, Opcode.OPTIONS, Buffer.alloc(0));
      expect((await held[0]!.next(1))?.opcode).toBe(Opcode.SUPPORTED);
    } finally {
      for (const c of held) c.close();
      await running.stop();
    }
  });
});
