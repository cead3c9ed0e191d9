// Client sockets adopted into slab reads (slab-reads.ts): every byte arrives once and in order however
// the client cuts its frames, chunks handed out stay intact while later reads land, pause() stops the
// reads and resume() restarts them, and the socket ends and closes as a plain one does.
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Consistency } from '../../src/protocol/consistency.js';
import { encodeFrame, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeQuery } from '../../src/protocol/requests.js';
import { adoptIntoSlabs, type SlabReads } from '../../src/proxy/slab-reads.js';
import { RawClient } from './raw-client.js';
import { openBackend, scriptedProxy } from './scripted-backend.js';

let closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

/** Resolves once `condition` holds, checking after every turn of the event loop; fails after `ms`. */
async function until(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A listener whose accepted sockets are adopted into slabs; what each delivers is kept, chunk by chunk. */
async function slabServer() {
  const accepted: { socket: Socket; reads: SlabReads; chunks: Buffer[]; ended: boolean; closed: boolean }[] = [];
  const server: Server = createServer((plain) => {
    const adopted = adoptIntoSlabs(plain);
    if (!adopted) throw new Error('this Node does not let an accepted socket read into slabs');
    const entry = { ...adopted, chunks: [] as Buffer[], ended: false, closed: false };
    adopted.reads.receive = (chunk) => entry.chunks.push(chunk);
    adopted.socket.on('end', () => (entry.ended = true));
    adopted.socket.on('close', () => (entry.closed = true));
    accepted.push(entry);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as { port: number }).port;
  const client = await new Promise<Socket>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(socket));
    socket.once('error', reject);
  });
  closers.push(() => void client.destroy());
  await until(() => accepted.length === 1, 'the connection accepted');
  const entry = accepted[0]!;
  closers.push(() => void entry.socket.destroy());
  const received = () => entry.chunks.reduce((n, c) => n + c.length, 0);
  return { entry, client, received };
}

describe('slab reads of accepted sockets', () => {
  it('deliver every byte once and in order, chunks staying intact while later reads land', async () => {
    const seed = Number(process.env.MUSTER_SLAB_SEED ?? Date.now() % 2 ** 31);
    console.log(`client slab reads seed ${seed} (replay with MUSTER_SLAB_SEED=${seed})`);
    let state = seed >>> 0;
    const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    const { entry, client, received } = await slabServer();
    // Enough bytes to fill several 64 KiB slabs, in writes of every size from 1 byte to 40 KiB.
    const sent = Buffer.alloc(400_000);
    for (let i = 0; i < sent.length; i++) sent[i] = Math.floor(random() * 256);
    for (let at = 0; at < sent.length;) {
      const cut = Math.min(sent.length - at, random() < 0.3 ? 1 + Math.floor(random() * 16) : 1 + Math.floor(random() * 40_000));
      client.write(sent.subarray(at, at + cut));
      at += cut;
      // Now and then wait for the reader, so reads come in every size, small ones included.
      if (random() < 0.2) await until(() => received() === at, `${at} bytes received`);
    }
    await until(() => received() === sent.length, 'every byte received');
    // Every chunk was held until now: none was overwritten by a later read into the same slab.
    expect(Buffer.concat(entry.chunks).equals(sent)).toBe(true);
    // They came from several slabs (400 KB cannot fit one): slabs were replaced as they filled.
    expect(new Set(entry.chunks.map((c) => c.buffer)).size).toBeGreaterThan(1);
  }, 60_000);

  it('stop reading while paused and deliver what waited once resumed; end and close as usual', async () => {
    const { entry, client, received } = await slabServer();
    client.write(Buffer.from('first'));
    await until(() => received() === 5, 'the first bytes');
    entry.socket.pause();
    expect(entry.socket.isPaused()).toBe(true);
    client.write(Buffer.from('second'));
    // The client's bytes reach the proxy's kernel buffer (a round trip of its own: the echo below
    // comes back through the same loopback only after them), yet the paused socket hands none out.
    const echoed = new Promise<void>((resolve) => client.once('data', () => resolve()));
    entry.socket.write('x');
    await echoed;
    await new Promise((resolve) => setImmediate(resolve));
    expect(received()).toBe(5);
    entry.socket.resume();
    await until(() => received() === 11, 'the bytes sent while paused');
    expect(Buffer.concat(entry.chunks).toString()).toBe('firstsecond');
    client.end();
    await until(() => entry.ended && entry.closed, "the client's FIN seen, the socket closed");
  }, 30_000);

  it('a request frame cut at every byte boundary across reads is answered once, through a client connection', async () => {
    const proxy = await scriptedProxy(openBackend);
    closers.push(() => proxy.close());
    const client = await RawClient.open(proxy.address);
    closers.push(() => client.close());
    const startup = encodeFrame({
      version: 4,
      response: false,
      flags: 0,
      stream: 1,
      opcode: Opcode.STARTUP,
      body: Buffer.from([0, 1, 0, 11, ...Buffer.from('CQL_VERSION'), 0, 5, ...Buffer.from('3.0.0')]),
    });
    client.socket.write(startup);
    expect((await client.next(1))?.opcode).toBe(Opcode.READY);
    const query = (stream: number) =>
      encodeFrame({
        version: 4,
        response: false,
        flags: 0,
        stream,
        opcode: Opcode.QUERY,
        body: encodeQuery({ query: 'SELECT v FROM ks.t', parameters: { consistency: Consistency.ONE } }, 4),
      });
    const length = query(0).length;
    const answers: Frame[] = [];
    for (let cut = 1; cut < length; cut++) {
      const bytes = query(100 + cut);
      client.socket.write(bytes.subarray(0, cut));
      // The first part is read on its own before the rest is sent: the frame spans two reads.
      await until(() => proxy.context.buffers.used === cut, `the first ${cut} bytes read`);
      client.socket.write(bytes.subarray(cut));
      const answer = await client.next(100 + cut);
      expect(answer?.opcode).toBe(Opcode.RESULT);
      answers.push(answer!);
    }
    expect(answers).toHaveLength(length - 1);
    expect(proxy.forwarded.filter((f) => f.opcode === Opcode.QUERY)).toHaveLength(length - 1);
  }, 60_000);
});
