import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy between one contender and the backend: it can delay every chunk in both
 * directions (latency) or cut every connection and refuse new ones (a partition). TLS passes
 * through untouched, so the contender still verifies the server's certificate.
 */
export class TcpProxy {
  readonly #upstream: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;
  #delay = 0;
  #dropping = false;
  port = 0;

  constructor(upstream: { host: string; port: number }) {
    this.#upstream = upstream;
  }

  async listen(): Promise<number> {
    const server = createServer((client) => this.#accept(client));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    return this.port;
  }

  /** Delay each chunk by `ms` from now on (0 turns it off); order is kept. */
  setLatency(ms: number): void {
    this.#delay = ms;
  }

  /** Cut every connection and refuse new ones until `drop(false)`. */
  drop(on: boolean): void {
    this.#dropping = on;
    if (on) for (const s of this.#sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  #accept(client: Socket): void {
    if (this.#dropping) {
      client.destroy();
      return;
    }
    const server = connect(this.#upstream.port, this.#upstream.host);
    for (const s of [client, server]) {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    this.#pipe(client, server);
    this.#pipe(server, client);
  }

  #pipe(from: Socket, to: Socket): void {
    let lastDue = 0;
    from.on('data', (chunk: Buffer) => {
      if (this.#delay <= 0) {
        to.write(chunk);
        return;
      }
      const due = Math.max(lastDue, Date.now() + this.#delay);
      lastDue = due;
      setTimeout(() => to.writable && to.write(chunk), due - Date.now());
    });
    from.on('end', () => {
      const wait = Math.max(0, lastDue - Date.now());
      setTimeout(() => to.end(), wait);
    });
  }
}
