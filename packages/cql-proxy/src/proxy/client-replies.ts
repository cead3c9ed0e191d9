import { encodeError, type ErrorMessage } from '../protocol/error-message.js';
import { ErrorCode, ProtocolError } from '../protocol/errors.js';
import { openFrame } from '../protocol/envelope.js';
import { FrameFlag, MAX_BODY_LENGTH, Opcode, type Frame } from '../protocol/frame.js';
import { decodeResult, encodeResult, type Result } from '../protocol/result.js';
import type { FrameCompression } from '../protocol/compression.js';
import type { ProxyMetrics } from '../http/metrics.js';
import { BackendConnectionError } from './backend-connection.js';
import type { BackendFootprint } from './backend-footprint.js';
import { hideNodeAddresses, withoutNodeAddresses } from './error-addresses.js';
import type { FrameWriter } from './frame-writer.js';
import { withClientWarnings, withoutFootprint } from './response-warnings.js';

/** An answer the proxy gives itself instead of forwarding. */
export type LocalAnswer = { readonly result: Result } | { readonly error: ErrorMessage };

/** The request an answer is for: its stream id, and its version for the encodings that depend on it. */
interface Request {
  readonly stream: number;
  readonly version: number;
}

/**
 * Everything one client connection sends its client, in the client's protocol version and
 * compression: answers the proxy composes (results, errors, events), and the backend's answers
 * under the client's stream id — as they came, but for errors naming real nodes and results the
 * proxy must rewrite.
 */
export class ClientReplies {
  readonly writer: FrameWriter;
  /** The client's protocol version, once its first frame told it. */
  version: number | undefined;
  /** v3/v4 frame compression the client negotiated in STARTUP. */
  codec: FrameCompression | undefined;
  readonly #metrics: ProxyMetrics;
  readonly #maxFrameBytes: number;
  /** The address the client dialled, which replaces node addresses in errors. */
  readonly #localAddress: () => string;
  readonly #closed: () => boolean;
  /** The backend's node addresses, host ids and tokens, which warnings must not show. */
  readonly #footprint: () => BackendFootprint;

  constructor(
    writer: FrameWriter,
    options: {
      metrics: ProxyMetrics;
      maxFrameBytes: number;
      localAddress: () => string;
      closed: () => boolean;
      footprint: () => BackendFootprint;
    },
  ) {
    this.writer = writer;
    this.#metrics = options.metrics;
    this.#maxFrameBytes = options.maxFrameBytes;
    this.#localAddress = options.localAddress;
    this.#closed = options.closed;
    this.#footprint = options.footprint;
  }

  /** A backend answer's message: decompressed, past the tracing id, warnings and custom payload its flags announce. */
  readonly open = (frame: Frame): Buffer => openFrame(frame, this.codec, this.#maxFrameBytes).message;

  reply(request: Request, answer: LocalAnswer): void {
    if ('error' in answer) {
      this.#metrics.errors.inc({ kind: `cql_${answer.error.code.toString(16)}` });
      this.send(request, Opcode.ERROR, encodeError(answer.error));
    } else {
      this.send(request, Opcode.RESULT, encodeResult(answer.result, request.version));
    }
  }

  /** A request that failed in the proxy or its backend connection, answered with the error the client should act on. */
  failure(request: Request, error: unknown): void {
    if (this.#closed()) return;
    if (ProtocolError.is(error)) {
      this.reply(request, { error: { code: error.code, message: error.message } });
      return;
    }
    const message = `proxy: ${(error as Error)?.message ?? String(error)}`;
    if (error instanceof BackendConnectionError) {
      // The node failed this request, not the request: the client may retry it on another host.
      // Which node it was is the operator's business (metrics, logs), not the client's.
      this.#metrics.errors.inc({ kind: 'backend' });
      this.reply(request, { error: { code: ErrorCode.OVERLOADED, message: withoutNodeAddresses(message) } });
      return;
    }
    // Anything else is the proxy's own fault: retrying elsewhere would hide it, so say so.
    this.#metrics.errors.inc({ kind: 'internal' });
    this.reply(request, { error: { code: ErrorCode.SERVER_ERROR, message } });
  }

  /** A RESULT rewritten before the client sees it; one the proxy cannot rewrite is not passed on as it is. */
  rewritten(request: Request, response: Frame, rewrite: (result: Result) => Result): void {
    let body: Buffer;
    try {
      body = encodeResult(rewrite(decodeResult(this.open(response), request.version)), request.version);
    } catch (error) {
      this.failure(request, new Error(`the backend's answer could not be rewritten: ${(error as Error)?.message ?? String(error)}`));
      return;
    }
    this.send(request, Opcode.RESULT, body);
  }

  /**
   * A backend ERROR, with the node addresses it may name replaced by the one this client dialled,
   * and the ring tokens and host ids hidden (a tombstone abort quotes the node's sub-range query).
   */
  relayedError(request: Request, response: Frame): void {
    let hidden: Buffer | undefined;
    try {
      const body = this.open(response);
      const shown = this.#localAddress();
      const scrubbed = hideNodeAddresses(body, request.version, shown, (message) => withoutFootprint(message, shown, this.#footprint()));
      if (scrubbed !== body) hidden = scrubbed;
    } catch {
      // An ERROR the proxy cannot read is passed on as it is; the client cannot read it either.
    }
    if (hidden) this.send(request, Opcode.ERROR, hidden);
    else this.relayed(request, response);
  }

  /**
   * A backend answer passed on as it came, unless it carries warnings: those are shown as the
   * virtual cluster's client may read them (response-warnings.ts). The flag test is all that other
   * answers pay.
   */
  relayed(request: Request, response: Frame): void {
    if ((response.flags & FrameFlag.WARNING) === 0) return this.write(request.stream, response.opcode, response.flags, response.body);
    let scrubbed: { readonly flags: number; readonly body: Buffer } | undefined;
    try {
      // Answers may be as large as the spec allows; maxFrameBytes bounds requests only.
      scrubbed = withClientWarnings(response, this.codec, MAX_BODY_LENGTH, this.#localAddress(), this.#footprint());
    } catch (error) {
      // Warnings the proxy cannot read could name anything: they are not passed on unread.
      this.failure(request, new Error(`the backend's answer could not be read: ${(error as Error)?.message ?? String(error)}`));
      return;
    }
    if (scrubbed) this.write(request.stream, response.opcode, scrubbed.flags, scrubbed.body);
    else this.write(request.stream, response.opcode, response.flags, response.body);
  }

  /** Sends a message the proxy composed, compressed when the client asked for compression. */
  send(request: { readonly stream: number }, opcode: number, body: Buffer): void {
    if (this.codec && body.length > 0) this.write(request.stream, opcode, FrameFlag.COMPRESSION, this.codec.compress(body));
    else this.write(request.stream, opcode, 0, body);
  }

  /** Sends a frame as it is (a backend's answer), under `stream`. */
  write(stream: number, opcode: number, flags: number, body: Buffer): void {
    if (this.#closed()) return;
    this.writer.frame(this.version ?? 4, true, flags, stream, opcode, body);
  }
}
