import type { Socket } from 'node:net';
import { encodeSegments } from '../protocol/segment.js';

/**
 * Writes encoded frames (header and body) to one socket. Everything written in one turn of the
 * event loop — all the answers decoded from one received chunk, say — leaves in a single corked
 * `writev` when the turn's synchronous work is done: one system call instead of one per frame.
 * After a v5 STARTUP exchange ({@link useSegments}) the frames of a turn are packed into as few
 * segments as fit (lz4 when negotiated).
 */
export class FrameWriter {
  readonly #socket: Socket;
  #segments: { lz4: boolean } | undefined;
  /** v5: envelopes of this turn, segmented together at the flush. */
  #envelopes: Buffer[] = [];
  #scheduled = false;
  readonly #flush = (): void => this.flush();

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  /** From now on frames travel in segments; frames written before keep their plain framing. */
  useSegments(lz4: boolean): void {
    this.#segments = { lz4 };
  }

  write(header: Buffer, body: Buffer): void {
    if (!this.#scheduled) {
      this.#scheduled = true;
      this.#socket.cork();
      process.nextTick(this.#flush);
    }
    if (this.#segments) {
      this.#envelopes.push(body.length > 0 ? Buffer.concat([header, body]) : header);
    } else {
      this.#socket.write(header);
      if (body.length > 0) this.#socket.write(body);
    }
  }

  /** Sends what this turn wrote now (before `end()`, say); the scheduled flush then does nothing. */
  flush(): void {
    if (!this.#scheduled) return;
    this.#scheduled = false;
    if (this.#envelopes.length > 0) {
      const envelopes = this.#envelopes;
      this.#envelopes = [];
      for (const piece of encodeSegments(envelopes, this.#segments)) this.#socket.write(piece);
    }
    this.#socket.uncork();
  }
}
