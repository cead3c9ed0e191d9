import { createServer, connect, type Server, type Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { cannedResponse, type CannedErrors } from './canned-response.js';
import { realNow } from './stepped-clock.js';

/** Which way a black hole swallows bytes: both, client → server only, or server → client only. */
export type BlackHole = 'both' | 'up' | 'down';

/**
 * A loopback TCP proxy between one contender and the backend: it can delay every chunk in both
 * directions (latency), cut every connection and refuse new ones (a partition that fails fast),
 * swallow bytes while keeping connections open (a black hole, which fails only by the client's own
 * timeouts), or answer every request with an HTTP error (an overloaded or failing server). TLS
 * passes through untouched, so the contender still verifies the server's certificate; a canned
 * error on TLS is answered with the server's own certificate (`tls`).
 */
export class TcpProxy {
  readonly #upstream: { host: string; port: number };
  readonly #tls: { cert: string | Buffer; key: string | Buffer } | undefined;
  readonly #sockets = new Set<Socket>();
  /**
   * Connections that lost bytes to a black hole: their stream is broken for good (a firewall that
   * dropped their state), so they keep swallowing after the hole closes, until the client gives up.
   */
  readonly #holed = new Map<Socket, BlackHole>();
  #server: Server | undefined;
  #delay = 0;
  #dropping = false;
  #hole: BlackHole | undefined;
  #errors: CannedErrors | undefined;
  port = 0;
  /** Bytes a black hole has swallowed so far. */
  swallowed = 0;

  constructor(upstream: { host: string; port: number }, options: { tls?: { cert: string | Buffer; key: string | Buffer } } = {}) {
    this.#upstream = upstream;
    this.#tls = options.tls;
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

  /**
   * Swallow bytes in `direction` on every connection, old and new, until `blackHole(undefined)`;
   * connections stay open and new ones are accepted. A connection that lost bytes stays broken.
   */
  blackHole(direction: BlackHole | undefined): void {
    this.#hole = direction;
  }

  /**
   * Answer every request on a new connection with an HTTP error from `errors`, then close; live
   * connections are cut so their next request comes here too. Undefined turns it off.
   */
  failWith(errors: CannedErrors | undefined): void {
    this.#errors = errors;
    if (errors) for (const s of this.#sockets) s.destroy();
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
    if (this.#errors) {
      this.#answer(client, this.#errors);
      return;
    }
    const server = connect(this.#upstream.port, this.#upstream.host);
    for (const s of [client, server]) {
      this.#sockets.add(s);
      s.on('close', () => {
        this.#sockets.delete(s);
        this.#holed.delete(s);
      });
      s.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    this.#pipe(client, server, 'up');
    this.#pipe(server, client, 'down');
  }

  /** One canned answer per connection: read the request line, answer, close. */
  #answer(raw: Socket, errors: CannedErrors): void {
    raw.on('error', () => raw.destroy());
    const client = this.#tls ? new TLSSocket(raw, { isServer: true, ...this.#tls }) : raw;
    client.on('error', () => raw.destroy());
    let head = '';
    client.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n')) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n')) return;
      const method = head.slice(0, head.indexOf(' '));
      client.end(cannedResponse(errors.pick(method)));
    });
  }

  #pipe(from: Socket, to: Socket, direction: 'up' | 'down'): void {
    let lastDue = 0;
    const swallowed = () => {
      const hole = this.#holed.get(from) ?? this.#hole;
      return hole === 'both' || hole === direction;
    };
    from.on('data', (chunk: Buffer) => {
      if (swallowed()) {
        this.#holed.set(from, this.#holed.get(from) ?? this.#hole!);
        this.swallowed += chunk.length;
        return;
      }
      if (this.#delay <= 0) {
        to.write(chunk);
        return;
      }
      const due = Math.max(lastDue, realNow() + this.#delay);
      lastDue = due;
      setTimeout(() => to.writable && to.write(chunk), due - realNow());
    });
    from.on('end', () => {
      // A FIN is a packet like any other: a black hole swallows it too.
      if (swallowed()) return;
      const wait = Math.max(0, lastDue - realNow());
      setTimeout(() => to.end(), wait);
    });
  }
}
