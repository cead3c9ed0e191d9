import { connect, type Socket } from 'node:net';
import { checkServerIdentity, connect as connectTls, type ConnectionOptions } from 'node:tls';
import { FrameDecoder, Opcode, type Frame } from '../protocol/frame.js';
import { SegmentedFrameDecoder } from '../protocol/segment.js';
import { FrameWriter } from './frame-writer.js';
import { SlabReads } from './slab-reads.js';
import { StreamIds } from './stream-ids.js';
import { PendingRequests, TIMED_OUT, type ResponseHandler } from './pending-requests.js';

export interface BackendAddress {
  readonly host: string;
  readonly port: number;
}

/** TLS towards a node: the chain is always verified; the name on it unless `verifyHostname` is false. */
export interface BackendTls {
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** The name the certificate must carry (also sent as SNI); default: the node's address. */
  readonly serverName?: string;
  readonly verifyHostname: boolean;
}

function tlsOptions(tls: BackendTls, host: string): ConnectionOptions {
  const expected = tls.serverName ?? host;
  return {
    ...(tls.ca ? { ca: tls.ca } : {}),
    ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}),
    ...(tls.serverName ? { servername: tls.serverName } : {}),
    rejectUnauthorized: true,
    checkServerIdentity: tls.verifyHostname ? (_name, certificate) => checkServerIdentity(expected, certificate) : () => undefined,
  };
}

export interface BackendConnectionOptions extends BackendAddress {
  readonly version: number;
  /** Connect with TLS. */
  readonly tls?: BackendTls;
  readonly connectTimeout: number;
  readonly maxBodyLength?: number;
  /** Server-pushed frames (EVENT, stream -1). */
  readonly onEvent?: (frame: Frame) => void;
  readonly onClose?: (error: Error | undefined) => void;
  /** When nothing was received for this long (ms), send OPTIONS; no answer closes the connection. */
  readonly heartbeatInterval?: number;
  /** A request was not answered within its timeout (the node may be hung). */
  readonly onTimeout?: () => void;
}

export type { ResponseHandler } from './pending-requests.js';

export class BackendConnectionError extends Error {}

/**
 * One TCP connection to a Cassandra node, multiplexing requests over stream ids. It speaks frames:
 * encoding and decoding bodies is the caller's business, so forwarded bytes are not touched.
 */
export class BackendConnection {
  readonly address: BackendAddress;
  readonly version: number;
  readonly #socket: Socket;
  #decoder: { push(chunk: Buffer): Frame[] };
  readonly #writer: FrameWriter;
  readonly #ids = new StreamIds();
  /** The requests in flight, by stream id (see pending-requests.ts). */
  readonly #pending = new PendingRequests();
  readonly #options: BackendConnectionOptions;
  #closed: Error | undefined | false = false;
  #sweeper: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** Not reading answers: the client they are for does not read its own (see {@link pause}). */
  #paused = false;
  #pausedAt = 0;
  /** Time of the last frame received, for idle heartbeats. */
  lastActivity = Date.now();

  private constructor(socket: Socket, options: BackendConnectionOptions, reads: SlabReads | undefined) {
    this.#socket = socket;
    this.#options = options;
    this.address = { host: options.host, port: options.port };
    this.version = options.version;
    this.#decoder = new FrameDecoder({ maxBodyLength: options.maxBodyLength });
    this.#writer = new FrameWriter(socket);
    socket.setNoDelay(true);
    if (reads) reads.receive = (chunk) => this.#receive(chunk);
    else socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(undefined));
    if (options.heartbeatInterval) {
      const interval = options.heartbeatInterval;
      this.#heartbeat = setInterval(() => {
        if (this.#paused || Date.now() - this.lastActivity < interval) return;
        // A half-open TCP connection is silent; a node that does not answer OPTIONS is given up.
        this.request(Opcode.OPTIONS, Buffer.alloc(0), { timeout: interval }).catch(() => this.#socket.destroy());
      }, interval);
      this.#heartbeat.unref();
    }
  }

  static connect(options: BackendConnectionOptions, signal?: AbortSignal): Promise<BackendConnection> {
    return new Promise((resolve, reject) => {
      // Plain TCP reads into slabs (slab-reads.ts); TLS keeps Node's reads.
      const reads = options.tls ? undefined : new SlabReads();
      const socket = options.tls
        ? connectTls({ host: options.host, port: options.port, ...tlsOptions(options.tls, options.host) })
        : connect({ host: options.host, port: options.port, onread: reads!.options });
      const fail = (error: Error) => {
        cleanup();
        socket.destroy();
        reject(
          new BackendConnectionError(`cannot connect to Cassandra at ${options.host}:${options.port}: ${error.message}`, { cause: error }),
        );
      };
      const timer = setTimeout(() => fail(new Error(`no answer within ${options.connectTimeout} ms`)), options.connectTimeout);
      const onAbort = () => fail(new Error('aborted'));
      const onError = (error: Error) => fail(error);
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('error', onError);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('error', onError);
      // A TLS socket is usable once the handshake (and the certificate checks) succeeded.
      socket.once(options.tls ? 'secureConnect' : 'connect', () => {
        cleanup();
        resolve(new BackendConnection(socket, options, reads));
      });
    });
  }

  get closed(): boolean {
    return this.#closed !== false;
  }

  get inFlight(): number {
    return this.#ids.inUse;
  }

  /** Whether the socket's send buffer is full: the caller should stop reading until {@link onDrain}. */
  get congested(): boolean {
    return this.#socket.writableNeedDrain;
  }

  onDrain(listener: () => void): void {
    this.#socket.once('drain', listener);
  }

  get paused(): boolean {
    return this.#paused;
  }

  /**
   * Stops reading answers until {@link resume}: for a client that does not read, they would pile
   * up in the proxy. The node's own send buffer then fills and it holds them. Timeouts and
   * heartbeats wait meanwhile: the answers may be there, unread.
   */
  pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#pausedAt = Date.now();
    this.#socket.pause();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    // The time spent not reading is not the node's delay: deadlines move by it.
    this.#pending.postpone(Date.now() - this.#pausedAt);
    this.#socket.resume();
  }

  /**
   * Sends one request; `handler` gets its response frame, or an error when the connection closes,
   * no stream id is free, or `timeout` (ms) passes without an answer. The callback form is the
   * forwarding hot path: no promise per request, and the answers to one received chunk are all
   * handled in the same turn, so their writes coalesce.
   */
  send(opcode: number, body: Buffer, flags: number, timeout: number | undefined, handler: ResponseHandler): void {
    if (this.#closed !== false) return handler(this.#closedError(), undefined);
    const stream = this.#ids.take();
    if (stream === undefined) return handler(new BackendConnectionError(`all stream ids to ${this.#label} are in flight`), undefined);
    this.#pending.add(stream, handler, timeout);
    if (timeout) this.#startSweeping(timeout);
    this.#writer.frame(this.version, false, flags, stream, opcode, body);
  }

  /** {@link send} as a promise, for the few requests off the hot path. */
  request(opcode: number, body: Buffer, options: { flags?: number; timeout?: number } = {}): Promise<Frame> {
    return new Promise<Frame>((resolve, reject) =>
      this.send(opcode, body, options.flags ?? 0, options.timeout, (error, response) => (error ? reject(error) : resolve(response!))),
    );
  }

  /**
   * One timer per connection checks deadlines, instead of one timer per request (which costs more
   * than forwarding the request). Answers may come up to a quarter of the timeout late.
   */
  #startSweeping(timeout: number): void {
    if (this.#sweeper) return;
    this.#sweeper = setInterval(() => this.#sweep(), Math.max(10, Math.min(1000, timeout / 4)));
    this.#sweeper.unref();
  }

  #sweep(): void {
    if (this.#paused) return;
    const timedOut = this.#pending.expire(
      Date.now(),
      (timeout) => new BackendConnectionError(`${this.#label} did not answer within ${timeout} ms`),
    );
    if (timedOut) this.#options.onTimeout?.();
  }

  /**
   * Switches to v5 segment framing; call right after the answer to STARTUP (READY or
   * AUTHENTICATE), before anything else is sent: the server frames everything after it.
   */
  useSegments(lz4: boolean): void {
    this.#writer.useSegments(lz4);
    this.#decoder = new SegmentedFrameDecoder({ lz4, maxBodyLength: this.#options.maxBodyLength });
  }

  get #label(): string {
    return `Cassandra ${this.address.host}:${this.address.port}`;
  }

  #closedError(): BackendConnectionError {
    const cause = this.#closed || undefined;
    return new BackendConnectionError(`connection to ${this.#label} is closed${cause ? `: ${cause.message}` : ''}`, { cause });
  }

  #receive(chunk: Buffer): void {
    this.lastActivity = Date.now();
    let frames: Frame[];
    try {
      frames = this.#decoder.push(chunk);
    } catch (error) {
      this.#socket.destroy(error as Error);
      return;
    }
    for (const frame of frames) {
      if (frame.stream < 0) {
        this.#options.onEvent?.(frame);
        continue;
      }
      // The id is free again once its answer is in, a late one included; an id not in flight is ignored.
      const handler = this.#pending.take(frame.stream);
      if (handler === undefined) continue;
      this.#ids.give(frame.stream);
      if (handler !== TIMED_OUT) handler(undefined, frame);
    }
  }

  #fail(error: Error | undefined): void {
    if (this.#closed !== false) return;
    this.#closed = error;
    const failure = this.#closedError();
    clearInterval(this.#sweeper);
    clearInterval(this.#heartbeat);
    this.#pending.failAll(failure);
    this.#options.onClose?.(error);
  }

  close(): void {
    this.#socket.destroy();
  }
}
