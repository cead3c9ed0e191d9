import { connect, type Socket } from 'node:net';
import { encodeFrameHeader, FrameDecoder, Opcode, type Frame } from '../protocol/frame.js';
import { SegmentedFrameDecoder } from '../protocol/segment.js';
import { writeFrame } from './frame-writer.js';
import { StreamIds } from './stream-ids.js';

export interface BackendAddress {
  readonly host: string;
  readonly port: number;
}

export interface BackendConnectionOptions extends BackendAddress {
  readonly version: number;
  readonly connectTimeout: number;
  readonly maxBodyLength?: number;
  /** Server-pushed frames (EVENT, stream -1). */
  readonly onEvent?: (frame: Frame) => void;
  readonly onClose?: (error: Error | undefined) => void;
  /** When nothing was received for this long (ms), send OPTIONS; no answer closes the connection. */
  readonly heartbeatInterval?: number;
}

interface Pending {
  resolve(frame: Frame): void;
  reject(error: Error): void;
  /** When to answer with a timeout (ms since the epoch), if at all. */
  deadline: number | undefined;
  timeout: number | undefined;
  /** Answered with a timeout error already; a late reply only frees the id. */
  timedOut: boolean;
}

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
  /** v5 after the STARTUP exchange: every frame travels in segments. */
  #segments: { lz4: boolean } | undefined;
  readonly #ids = new StreamIds();
  readonly #pending = new Map<number, Pending>();
  readonly #options: BackendConnectionOptions;
  #closed: Error | undefined | false = false;
  #sweeper: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** Time of the last frame received, for idle heartbeats. */
  lastActivity = Date.now();

  private constructor(socket: Socket, options: BackendConnectionOptions) {
    this.#socket = socket;
    this.#options = options;
    this.address = { host: options.host, port: options.port };
    this.version = options.version;
    this.#decoder = new FrameDecoder({ maxBodyLength: options.maxBodyLength });
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (error) => this.#fail(error));
    socket.on('close', () => this.#fail(undefined));
    if (options.heartbeatInterval) {
      const interval = options.heartbeatInterval;
      this.#heartbeat = setInterval(() => {
        if (Date.now() - this.lastActivity < interval) return;
        // A half-open TCP connection is silent; a node that does not answer OPTIONS is given up.
        this.request(Opcode.OPTIONS, Buffer.alloc(0), { timeout: interval }).catch(() => this.#socket.destroy());
      }, interval);
      this.#heartbeat.unref();
    }
  }

  static connect(options: BackendConnectionOptions, signal?: AbortSignal): Promise<BackendConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: options.host, port: options.port });
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
      socket.once('connect', () => {
        cleanup();
        resolve(new BackendConnection(socket, options));
      });
    });
  }

  get closed(): boolean {
    return this.#closed !== false;
  }

  get inFlight(): number {
    return this.#ids.inUse;
  }

  /**
   * Sends one request and resolves with its response frame. `timeout` answers with an error
   * rather than silence when the node does not reply.
   */
  request(opcode: number, body: Buffer, options: { flags?: number; timeout?: number } = {}): Promise<Frame> {
    if (this.#closed !== false) return Promise.reject(this.#closedError());
    const stream = this.#ids.take();
    if (stream === undefined) return Promise.reject(new BackendConnectionError(`all stream ids to ${this.#label} are in flight`));
    return new Promise<Frame>((resolve, reject) => {
      const pending: Pending = { resolve, reject, deadline: undefined, timeout: options.timeout, timedOut: false };
      if (options.timeout) {
        pending.deadline = Date.now() + options.timeout;
        this.#startSweeping(options.timeout);
      }
      this.#pending.set(stream, pending);
      const header = encodeFrameHeader({ version: this.version, response: false, flags: options.flags ?? 0, stream, opcode }, body.length);
      this.#send(header, body);
    });
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
    const now = Date.now();
    for (const pending of this.#pending.values()) {
      if (pending.timedOut || pending.deadline === undefined || pending.deadline > now) continue;
      // The id stays reserved until the late answer arrives (or the connection closes), so a late
      // answer can never be mistaken for the reply to a newer request.
      pending.timedOut = true;
      pending.reject(new BackendConnectionError(`${this.#label} did not answer within ${pending.timeout} ms`));
    }
  }

  #send(header: Buffer, body: Buffer): void {
    writeFrame(this.#socket, header, body, this.#segments);
  }

  /**
   * Switches to v5 segment framing; call right after the answer to STARTUP (READY or
   * AUTHENTICATE), before anything else is sent: the server frames everything after it.
   */
  useSegments(lz4: boolean): void {
    this.#segments = { lz4 };
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
      const pending = this.#pending.get(frame.stream);
      if (!pending) continue;
      this.#pending.delete(frame.stream);
      this.#ids.give(frame.stream);
      if (!pending.timedOut) pending.resolve(frame);
    }
  }

  #fail(error: Error | undefined): void {
    if (this.#closed !== false) return;
    this.#closed = error;
    const failure = this.#closedError();
    clearInterval(this.#sweeper);
    clearInterval(this.#heartbeat);
    for (const [, pending] of this.#pending) {
      if (!pending.timedOut) pending.reject(failure);
    }
    this.#pending.clear();
    this.#options.onClose?.(error);
  }

  close(): void {
    this.#socket.destroy();
  }
}
