// A loopback TCP proxy for fault tests: put it between a client and a real server, then delay what
// flows in either direction, cut every open connection, or refuse new ones, while the test runs.
// It relays bytes and knows no protocol, so TLS (the apiserver's) passes through end to end: the
// server's certificate for 127.0.0.1 stays valid on the proxy's port.
//
//   const proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: 6443 } });
//   proxy.setDelay({ downstream: 600 });   // every answer reaches the client 600 ms late
//   proxy.dropConnections();               // RST every open connection
//   proxy.refuse(true);                    // new connections are reset at once
//   proxy.hold(true);                      // nothing flows either way (a paused server); hold(false) hands it all on
//   await proxy.close();
import { createServer, connect } from 'node:net';

/**
 * Bytes of one direction of one connection, handed on `delayMs` after they arrived, in order.
 * The reading side is paused while too much is waiting, so a slow delay cannot buffer unboundedly.
 */
class DelayedPipe {
  #queue = [];
  #bytes = 0;
  #timer = undefined;

  constructor(from, to, delayOf, heldOf = () => false) {
    this.from = from;
    this.to = to;
    this.delayOf = delayOf;
    this.heldOf = heldOf;
    from.on('data', (chunk) => this.#push(chunk));
    from.on('end', () => this.#push(null));
  }

  #push(chunk) {
    const delay = this.delayOf();
    if (delay <= 0 && this.#queue.length === 0 && !this.heldOf()) return this.#deliver(chunk);
    this.#queue.push({ at: Date.now() + delay, chunk });
    if (chunk) this.#bytes += chunk.length;
    if (this.#bytes > highWater) this.from.pause();
    this.#arm();
  }

  #arm() {
    if (this.#timer || this.#queue.length === 0 || this.heldOf()) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        const now = Date.now();
        while (this.#queue.length > 0 && this.#queue[0].at <= now && !this.heldOf()) {
          const { chunk } = this.#queue.shift();
          if (chunk) this.#bytes -= chunk.length;
          this.#deliver(chunk);
        }
        if (this.#bytes <= highWater) this.from.resume();
        this.#arm();
      },
      Math.max(0, this.#queue[0].at - Date.now()),
    );
  }

  #deliver(chunk) {
    if (this.to.destroyed) return;
    if (chunk === null) this.to.end();
    else this.to.write(chunk);
  }

  /** Hands on what a hold kept back, in order (called when the hold ends). */
  resume() {
    this.#arm();
  }

  stop() {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#queue = [];
  }
}

const highWater = 4 * 1024 * 1024;

/**
 * Starts the proxy on `host` (127.0.0.1) and a free port, relaying to `target`. `delay` in ms:
 * `upstream` for client → server bytes, `downstream` for server → client bytes.
 */
export async function startTcpProxy({ target, host = '127.0.0.1', port = 0, delay = {} }) {
  let upstream = delay.upstream ?? 0;
  let downstream = delay.downstream ?? 0;
  let refusing = false;
  let holding = false;
  const open = new Set();
  let accepted = 0;

  const server = createServer((client) => {
    accepted++;
    if (refusing) return client.resetAndDestroy();
    const backend = connect({ host: target.host, port: target.port });
    const held = () => holding;
    const pipes = [new DelayedPipe(client, backend, () => upstream, held), new DelayedPipe(backend, client, () => downstream, held)];
    const pair = { client, backend, pipes };
    open.add(pair);
    const finish = () => {
      if (!open.delete(pair)) return;
      for (const p of pipes) p.stop();
      client.destroy();
      backend.destroy();
    };
    for (const socket of [client, backend]) {
      socket.on('error', finish);
      socket.on('close', finish);
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();

  return {
    host: address.address,
    port: address.port,
    /** `host:port` to give a client instead of the server's. */
    address: `${address.address}:${address.port}`,
    /** Connections accepted so far. */
    get accepted() {
      return accepted;
    },
    get connections() {
      return open.size;
    },
    setDelay({ upstream: up, downstream: down }) {
      if (up !== undefined) upstream = up;
      if (down !== undefined) downstream = down;
    },
    /** Resets every open connection (both sides see ECONNRESET), as a dropped network path would. */
    dropConnections() {
      for (const { client, backend } of [...open]) {
        client.resetAndDestroy();
        backend.resetAndDestroy();
      }
    },
    /** While true, new connections are reset as soon as they are accepted. */
    refuse(on) {
      refusing = on;
    },
    /**
     * While true, no byte flows either way on any connection, old or new (new ones are accepted):
     * requests neither fail nor get answered, as with a paused server. hold(false) hands on, in
     * order, what was kept back, so a request sent meanwhile takes effect late.
     */
    hold(on) {
      holding = on;
      if (!on) for (const { pipes } of open) for (const p of pipes) p.resume();
    },
    async close() {
      this.dropConnections();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
