import type { Socket } from 'node:net';
import { HEADER_LENGTH, RESPONSE_BIT } from '../protocol/frame.js';
import { encodeSegments } from '../protocol/segment.js';

/**
 * Bodies up to this size are copied into the turn's one buffer; larger ones (a big result page)
 * follow it as writes of their own, where a copy would cost more than the extra iovec.
 */
const COPY_LIMIT = 16 * 1024;

/** In {@link FrameWriter}'s header list: the body is raw bytes that carry their own header. */
const RAW = -1;

/**
 * Writes frames (header and body) to one socket. Everything written in one turn of the event
 * loop — all the answers decoded from one received chunk, say — leaves when the turn's synchronous
 * work is done, copied into one buffer: one `write` system call, and one pass through the socket's
 * stream machinery, instead of two stream writes (header, body) per frame and a `writev` of them
 * all. The headers are written straight into that buffer: no header Buffer per frame.
 * After a v5 STARTUP exchange ({@link useSegments}) the frames of a turn are packed into as few
 * segments as fit (lz4 when negotiated).
 */
export class FrameWriter {
  readonly #socket: Socket;
  #segments: { lz4: boolean } | undefined;
  /** v5: envelopes of this turn, segmented together at the flush. */
  #envelopes: Buffer[] = [];
  /**
   * Per frame of this turn: version byte (or {@link RAW}), flags, stream, opcode; and its body.
   * Filled by index up to #count and reused across turns (truncating an array costs a runtime call).
   */
  readonly #headers: number[] = [];
  readonly #bodies: (Buffer | undefined)[] = [];
  #count = 0;
  /** Bytes queued this turn and not yet handed to the socket. */
  #pending = 0;
  #scheduled = false;
  readonly #flush = (): void => this.flush();

  constructor(socket: Socket) {
    this.#socket = socket;
  }

  /** Bytes of this turn's frames not yet written to the socket. */
  get pendingBytes(): number {
    return this.#pending;
  }

  /** From now on frames travel in segments; frames written before keep their plain framing. */
  useSegments(lz4: boolean): void {
    this.#flushPlain();
    this.#pending = 0;
    this.#segments = { lz4 };
  }

  /** Queues one frame for this turn's write. */
  frame(version: number, response: boolean, flags: number, stream: number, opcode: number, body: Buffer): void {
    this.#schedule();
    this.#pending += HEADER_LENGTH + body.length;
    const versionByte = (version & 0x7f) | (response ? RESPONSE_BIT : 0);
    if (this.#segments) {
      const envelope = Buffer.allocUnsafe(HEADER_LENGTH + body.length);
      writeHeader(envelope, 0, versionByte, flags, stream, opcode, body.length);
      body.copy(envelope, HEADER_LENGTH);
      this.#envelopes.push(envelope);
      return;
    }
    this.#queue(versionByte, flags, stream, opcode, body);
  }

  #queue(versionByte: number, flags: number, stream: number, opcode: number, body: Buffer): void {
    const i = this.#count++;
    const h = 4 * i;
    this.#headers[h] = versionByte;
    this.#headers[h + 1] = flags;
    this.#headers[h + 2] = stream;
    this.#headers[h + 3] = opcode;
    this.#bodies[i] = body;
  }

  /** Queues bytes that are already a whole frame's header (one the proxy composed itself) and its body. */
  write(header: Buffer, body: Buffer): void {
    this.#schedule();
    this.#pending += header.length + body.length;
    if (this.#segments) {
      this.#envelopes.push(body.length > 0 ? Buffer.concat([header, body]) : header);
      return;
    }
    this.#queue(RAW, 0, 0, 0, header);
    this.#queue(RAW, 0, 0, 0, body);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Runs when the current callback (a socket's read, say) returns, before the next I/O callback.
    queueMicrotask(this.#flush);
  }

  /** Sends what this turn wrote now (before `end()`, say); the scheduled flush then does nothing. */
  flush(): void {
    if (!this.#scheduled) return;
    this.#scheduled = false;
    this.#pending = 0;
    this.#flushPlain();
    if (this.#envelopes.length > 0) {
      const envelopes = this.#envelopes;
      this.#envelopes = [];
      this.#socket.cork();
      for (const piece of encodeSegments(envelopes, this.#segments)) this.#socket.write(piece);
      this.#socket.uncork();
    }
  }

  /** The plainly framed part of the turn: runs of small frames copied together, large bodies by reference. */
  #flushPlain(): void {
    const headers = this.#headers;
    const bodies = this.#bodies;
    const count = this.#count;
    if (count === 0) return;
    const socket = this.#socket;
    let corked = false;
    let start = 0;
    while (start < count) {
      // Frames start..end-1 are copied whole; frame `end`, if any, has a large body sent after the buffer.
      let size = 0;
      let end = start;
      for (; end < count; end++) {
        const length = bodies[end]!.length;
        if (headers[4 * end] !== RAW) size += HEADER_LENGTH;
        if (length > COPY_LIMIT) break;
        size += length;
      }
      const out = Buffer.allocUnsafe(size);
      let at = 0;
      for (let i = start; i <= end && i < count; i++) {
        const body = bodies[i]!;
        const h = 4 * i;
        if (headers[h] !== RAW) at = writeHeader(out, at, headers[h]!, headers[h + 1]!, headers[h + 2]!, headers[h + 3]!, body.length);
        if (i < end) at += body.copy(out, at);
      }
      if (end < count && !corked) {
        // Several writes for this turn: they still leave in one writev.
        corked = true;
        socket.cork();
      }
      if (out.length > 0) socket.write(out);
      if (end < count) socket.write(bodies[end]!);
      start = end + 1;
    }
    if (corked) socket.uncork();
    this.#count = 0;
    // The bodies are written (or copied): their memory is not held until the slots are reused.
    for (let i = 0; i < count; i++) bodies[i] = undefined;
  }
}

function writeHeader(out: Buffer, at: number, versionByte: number, flags: number, stream: number, opcode: number, length: number): number {
  out[at] = versionByte;
  out[at + 1] = flags;
  out[at + 2] = (stream >> 8) & 0xff;
  out[at + 3] = stream & 0xff;
  out[at + 4] = opcode;
  out.writeInt32BE(length, at + 5);
  return at + HEADER_LENGTH;
}
