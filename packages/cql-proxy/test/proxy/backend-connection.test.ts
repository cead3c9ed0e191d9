// The backend connection's own liveness checks, against a loopback server that stops answering.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { encodeFrame, FrameDecoder, Opcode, type Frame } from '../../src/protocol/frame.js';
import { BackendConnection } from '../../src/proxy/backend-connection.js';

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
});

/** A "node" that accepts connections and reads everything, but never answers (a hung server). */
async function silentNode(): Promise<number> {
  server = createServer((socket) => {
    sockets.push(socket);
    socket.resume();
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return (server.address() as { port: number }).port;
}

/** A "node" answering each request with RESULT bodies of `sizes[i]` bytes, cut into writes of seeded random lengths. */
async function chattyNode(sizes: readonly number[], seed: number): Promise<number> {
  let state = seed >>> 0;
  const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  server = createServer((socket) => {
    sockets.push(socket);
    const decoder = new FrameDecoder();
    let next = 0;
    socket.on('data', (chunk: Buffer) => {
      const answers = decoder.push(chunk).map((request) => {
        const size = sizes[next++]!;
        const body = Buffer.alloc(size, (request.stream * 7 + size) & 0xff);
        return encodeFrame({ version: 4, response: true, flags: 0, stream: request.stream, opcode: Opcode.RESULT, body });
      });
      const bytes = Buffer.concat(answers);
      for (let at = 0; at < bytes.length;) {
        const cut = Math.min(bytes.length - at, 1 + Math.floor(random() * 70_000));
        socket.write(bytes.subarray(at, at + cut));
        at += cut;
      }
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return (server.address() as { port: number }).port;
}

describe('BackendConnection', () => {
  it('answers stay intact while later reads arrive (slab reads: no read lands in memory an earlier chunk holds)', async () => {
    const seed = Number(process.env.MUSTER_SLAB_SEED ?? Date.now() % 2 ** 31);
    console.log(`slab reads seed ${seed} (replay with MUSTER_SLAB_SEED=${seed})`);
    let state = seed;
    const random = () => (state = (Math.imul(state, 22695477) + 1) >>> 0) / 2 ** 32;
    const sizes = Array.from({ length: 600 }, () => (random() < 0.1 ? 20_000 + Math.floor(random() * 60_000) : Math.floor(random() * 300)));
    const port = await chattyNode(sizes, seed);
    const connection = await BackendConnection.connect({ host: '127.0.0.1', port, version: 4, connectTimeout: 1000 });
    const answers: Frame[] = [];
    // In batches, all held until the end: a body must not change after its frame was handed out.
    for (let at = 0; at < sizes.length; at += 50) {
      const batch = sizes.slice(at, at + 50).map(() => connection.request(Opcode.OPTIONS, Buffer.alloc(0), { timeout: 10_000 }));
      answers.push(...(await Promise.all(batch)));
      if (at === 300) {
        connection.pause(); // reads stop and resume without loss
        setTimeout(() => connection.resume(), 50);
      }
    }
    expect(answers.map((a) => a.body.length)).toEqual(sizes);
    for (const answer of answers) {
      const fill = (answer.stream * 7 + answer.body.length) & 0xff;
      expect(answer.body.every((b) => b === fill)).toBe(true);
    }
    connection.close();
  }, 30_000);

  it('an idle connection whose node stops answering OPTIONS is closed', async () => {
    const port = await silentNode();
    let closed = false;
    const connection = await BackendConnection.connect({
      host: '127.0.0.1',
      port,
      version: 4,
      connectTimeout: 1000,
      heartbeatInterval: 100,
      onClose: () => void (closed = true),
    });
    const deadline = Date.now() + 5000;
    while (!closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(true);
    expect(connection.closed).toBe(true);
  });

  it('a request the node does not answer fails with a timeout error, not silence', async () => {
    const port = await silentNode();
    const connection = await BackendConnection.connect({ host: '127.0.0.1', port, version: 4, connectTimeout: 1000 });
    await expect(connection.request(Opcode.OPTIONS, Buffer.alloc(0), { timeout: 200 })).rejects.toThrow(/did not answer within 200 ms/);
    connection.close();
  });

  it('a node that refuses the connection is reported by address', async () => {
    const port = await silentNode();
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    await expect(BackendConnection.connect({ host: '127.0.0.1', port, version: 4, connectTimeout: 1000 })).rejects.toThrow(
      new RegExp(`cannot connect to Cassandra at 127.0.0.1:${port}`),
    );
  });
});
