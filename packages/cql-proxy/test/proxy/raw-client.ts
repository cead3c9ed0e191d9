import { connect, type Socket } from 'node:net';
import { frameCompression, type FrameCompression } from '../../src/protocol/compression.js';
import { encodeFrameHeader, FrameDecoder, FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import { encodeRegister, encodeStartup } from '../../src/protocol/requests.js';
import { encodeSegments, SegmentedFrameDecoder } from '../../src/protocol/segment.js';

/** A bare CQL connection for tests: frames in, frames out, nothing hidden. */
export class RawClient {
  readonly socket: Socket;
  #decoder: { push(chunk: Buffer): Frame[] } = new FrameDecoder();
  #segments: { lz4: boolean } | undefined;
  readonly #frames: Frame[] = [];
  #waiters: (() => void)[] = [];
  #ended = false;
  compression: FrameCompression | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => {
      try {
        this.#frames.push(...this.#decoder.push(chunk));
      } catch {
        this.socket.destroy();
      }
      this.#wake();
    });
    socket.on('close', () => {
      this.#ended = true;
      this.#wake();
    });
    socket.on('error', () => undefined);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** `localAddress`: the source address (any of 127/8 reaches a loopback listener). */
  static open(address: string, localAddress?: string): Promise<RawClient> {
    const [host, port] = address.split(':');
    return new Promise((resolve, reject) => {
      // TCP_NODELAY, as drivers set it: with Nagle a small request written while the previous one
      // is unacknowledged waits for the peer's delayed ACK, so it reaches the proxy after later ones.
      const socket = connect({ host: host!, port: Number(port), noDelay: true, ...(localAddress ? { localAddress } : {}) }, () =>
        resolve(new RawClient(socket)),
      );
      socket.once('error', reject);
    });
  }

  /** A v4 client past STARTUP, registered for `eventTypes`: what watches a proxy's events. */
  static async registered(address: string, eventTypes: string[]): Promise<RawClient> {
    const client = await RawClient.open(address);
    client.send(4, 1, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
    if ((await client.next(1))?.opcode !== Opcode.READY) throw new Error(`${address}: STARTUP was not answered READY`);
    client.send(4, 2, Opcode.REGISTER, encodeRegister({ eventTypes }));
    if ((await client.next(2))?.opcode !== Opcode.READY) throw new Error(`${address}: REGISTER was not answered READY`);
    return client;
  }

  get closed(): boolean {
    return this.#ended;
  }

  send(version: number, stream: number, opcode: number, body: Buffer, flags = 0): void {
    let payload = body;
    if (this.compression && body.length > 0) {
      payload = this.compression.compress(body);
      flags |= FrameFlag.COMPRESSION;
    }
    const frame = Buffer.concat([encodeFrameHeader({ version, response: false, flags, stream, opcode }, payload.length), payload]);
    if (this.#segments) for (const piece of encodeSegments([frame], this.#segments)) this.socket.write(piece);
    else this.socket.write(frame);
  }

  /** v5 framing from now on, as after READY or AUTHENTICATE. */
  useSegments(lz4: boolean): void {
    this.#segments = { lz4 };
    this.#decoder = new SegmentedFrameDecoder({ lz4 });
  }

  useCompression(name: string): void {
    this.compression = frameCompression(name);
  }

  /** The next frame for `stream` (any stream when omitted), or undefined if the connection closes first. */
  async next(stream?: number, timeoutMs = 10_000): Promise<Frame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.#frames.findIndex((f) => stream === undefined || f.stream === stream);
      if (index >= 0) {
        const frame = this.#frames.splice(index, 1)[0]!;
        if (frame.flags & FrameFlag.COMPRESSION && this.compression)
          return { ...frame, body: this.compression.decompress(frame.body, 256 * 1024 * 1024) };
        return frame;
      }
      if (this.#ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no frame${stream === undefined ? '' : ` on stream ${stream}`} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}
