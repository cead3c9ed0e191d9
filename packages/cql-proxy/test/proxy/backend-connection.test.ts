// The backend connection's own liveness checks, against a loopback server that stops answering.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { Opcode } from '../../src/protocol/frame.js';
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

describe('BackendConnection', () => {
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
