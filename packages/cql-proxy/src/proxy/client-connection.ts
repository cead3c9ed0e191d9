import type { Socket } from 'node:net';
import { encodeError, type ErrorMessage } from '../protocol/error-message.js';
import { ErrorCode, ProtocolError, UnsupportedVersionError } from '../protocol/errors.js';
import { encodeEvent, type Event } from '../protocol/event.js';
import { FrameDecoder, FrameFlag, Opcode, type Frame } from '../protocol/frame.js';
import { decodeExecute, decodePrepare, decodeQuery, decodeRegister, decodeStartup } from '../protocol/requests.js';
import { Reader } from '../protocol/reader.js';
import { namesKeyspace, requestMessage } from '../protocol/request-message.js';
import { encodeSupported } from '../protocol/responses.js';
import type { Result } from '../protocol/result.js';
import { SegmentedFrameDecoder } from '../protocol/segment.js';
import { checkForwardedRequest } from '../protocol/request-check.js';
import { readStatement } from '../protocol/statement.js';
import {
  describeVersions,
  isSupportedVersion,
  replyVersion,
  SUPPORTED_VERSIONS,
  UNSUPPORTED_VERSION_MESSAGE,
  unsupportedVersionReply,
} from '../protocol/version.js';
import { BackendConnectionError, type BackendConnection } from './backend-connection.js';
import { Handshake } from './handshake.js';
import type { VirtualView } from '../virtual/view.js';
import type { ProxyContext } from './context.js';
import { FrameWriter } from './frame-writer.js';
import { ClientReplies, type LocalAnswer } from './client-replies.js';
import { PreparedCache } from './prepared-cache.js';
import { batchRefusal } from './batch-check.js';
import { isWriteStatement } from '../virtual/statement-target.js';
import { isSchemaChangeResult } from './schema-agreement.js';
import { KeyspaceInUse } from './keyspace-change.js';
import { ReplicaConnections } from './replica-connections.js';
import { decodeAuthenticate } from '../protocol/responses.js';
import { startupCompression } from './startup-compression.js';
import { recoverUnprepared, rememberPrepared, type RecoveryScope } from './prepared-recovery.js';
import { ReplicaRoute, type RouteTarget } from './replica-route.js';
import type { SlabReads } from './slab-reads.js';

const unsupportedVersion = (version: number) =>
  `${UNSUPPORTED_VERSION_MESSAGE} (${version}); supported versions are (${describeVersions(SUPPORTED_VERSIONS).join(', ')})`;

const unpreparedHere = (id: Buffer): ErrorMessage => ({
  code: ErrorCode.UNPREPARED,
  message: `Prepared statement 0x${id.toString('hex')} was not prepared through this proxy (or it has been evicted); prepare it again`,
  details: { code: ErrorCode.UNPREPARED, id },
});

export type { LocalAnswer } from './client-replies.js';

/** What forwarding one request must also do with its answer. */
interface Forwarding {
  /** A PREPARE: remember the statement, so an UNPREPARED elsewhere can be recovered. */
  readonly prepare?: { readonly query: string; readonly keyspace: string | undefined };
  /** An EXECUTE: recover from UNPREPARED. */
  readonly execute?: true;
  /** Called after the answer was written to the client. */
  readonly answered?: (opcode: number, response: Frame) => void;
  /** A RESULT the client must not see as the backend wrote it (DESCRIBE CLUSTER's real ring). */
  readonly rewrite?: (result: Result) => Result;
}

/** Shared by every forwarded EXECUTE: no object per request. */
const EXECUTE: Forwarding = { execute: true };

/**
 * Bytes one client's requests may take of one turn of the event loop. libuv reads a readable socket
 * up to 32 times in one go (2 MiB in 64 KiB reads): a client bursting small requests held every
 * other client for the time it took to answer all of them.
 */
const READ_PER_TURN = 64 * 1024;

/** Bytes of answers composed in one turn past which a client that does not read them is not answered further. */
const ANSWERS_HELD = 64 * 1024;

/**
 * One client connection. System-table reads, OPTIONS and REGISTER are answered here; everything
 * else goes, bytes untouched but for the stream id, over this client's own connection to one
 * backend node, which is chosen at STARTUP (a node that fails to connect is skipped). STARTUP and
 * the SASL exchange pass through, so the backend authenticates each client itself. A prepared
 * EXECUTE may instead go to a replica of its partition, over another connection of the client's
 * own (replica-connections.ts).
 */
export class ClientConnection {
  readonly id: number;
  readonly socket: Socket;
  readonly #context: ProxyContext;
  #decoder: { push(chunk: Buffer): Frame[]; readonly buffered: number };
  /** Bytes of a partly received frame, counted in the proxy-wide budget. */
  #buffered = 0;
  /** The last request message read, so a frame is decompressed once however often it is read. */
  #messageOf: Frame | undefined;
  #message: Buffer | undefined;
  readonly #writer: FrameWriter;
  /** What this client is sent, in its version and compression. */
  readonly #out: ClientReplies;
  #backend: BackendConnection | undefined;
  #connecting: Promise<BackendConnection> | undefined;
  readonly #keyspace = new KeyspaceInUse();
  #inFlight = 0;
  #closed = false;
  /** After a fatal error: what the client still sends is dropped unread until its FIN. */
  #discardRest = false;
  /** Bytes received in this turn of the event loop; reset by the yield that {@link READ_PER_TURN} asks for. */
  #readThisTurn = 0;
  /** Frames of a read wait for the client to read its answers (see #handle). */
  #holding = false;
  readonly #handshake = new Handshake();
  /** Draining: half-close once the last request in flight has its answer. */
  #endWhenAnswered = false;
  #driverName: string | undefined;
  readonly registered = new Set<string>();
  /** The membership view this client's last system-table read was answered from. */
  servedView: VirtualView | undefined;
  readonly #prepared: PreparedCache;
  /** Where EXECUTEs go, over connections to other nodes; undefined with routing off. */
  #route: ReplicaRoute | undefined;
  readonly #recovery: RecoveryScope;

  /** `reads`: the socket reads into slabs (slab-reads.ts) and delivers there instead of to 'data'. */
  constructor(id: number, socket: Socket, context: ProxyContext, reads?: SlabReads) {
    this.id = id;
    this.socket = socket;
    this.#context = context;
    this.#decoder = new FrameDecoder({ maxBodyLength: context.config.limits.maxFrameBytes });
    this.#prepared = context.prepared;
    this.#writer = new FrameWriter(socket);
    this.#out = new ClientReplies(this.#writer, {
      metrics: context.metrics,
      maxFrameBytes: context.config.limits.maxFrameBytes,
      localAddress: () => this.localAddress,
      closed: () => this.#closed,
      footprint: context.backendFootprint,
    });
    this.#recovery = {
      prepared: context.prepared,
      replicas: () => this.#route?.connections,
      timeout: context.config.backend.requestTimeout,
      open: this.#out.open,
      reprepared: () => context.metrics.errors.inc({ kind: 'reprepared' }),
    };
    socket.setNoDelay(true);
    if (reads) reads.receive = (chunk) => this.#receive(chunk);
    else socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', () => this.close());
    socket.on('close', () => this.close());
  }

  get version(): number | undefined {
    return this.#out.version;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** The DRIVER_NAME the client's STARTUP named, if any. */
  get driverName(): string | undefined {
    return this.#driverName;
  }

  /** Stream ids taken on this client's backend connection (requests the node has not answered). */
  get backendStreamsInUse(): number {
    return (this.#backend?.inFlight ?? 0) + (this.#route?.connections.inFlight ?? 0);
  }

  /** The address drivers reached this instance on (what system.local reports when none is configured). */
  get localAddress(): string {
    return this.socket.localAddress ?? '127.0.0.1';
  }

  #receive(chunk: Buffer): void {
    if (this.#discardRest) return;
    if (this.#closed) {
      // After a fatal error (until the socket is destroyed), or sent before the client saw this
      // connection's FIN (drain): it cannot be answered any more.
      this.#context.metrics.errors.inc({ kind: 'after_close' });
      return;
    }
    let frames: Frame[];
    try {
      frames = this.#decoder.push(chunk);
    } catch (error) {
      this.#fatal(error);
      return;
    }
    if (!this.#holdBuffered()) return;
    this.#handle(frames, 0);
    this.#readThisTurn += chunk.length;
    if (this.#readThisTurn >= READ_PER_TURN && !this.socket.isPaused()) this.#yieldTurn();
  }

  /** Lets other clients' reads run before this one's next: pause now, read again in the next turn. */
  #yieldTurn(): void {
    this.socket.pause();
    setImmediate(() => {
      this.#readThisTurn = 0;
      // Frames held for the client to read its answers go first: their drain resumes reading.
      if (this.#closed || this.#holding) return;
      this.socket.resume();
      // The turn's answers left after the last check: backpressure may be due now.
      this.#throttle();
      // The last answer of a draining connection may have come while it was paused.
      this.#endIfAnswered();
    });
  }

  /**
   * Answers `frames` from `from` on. A client that does not read its answers stops being answered
   * (and read) once {@link ANSWERS_HELD} bytes of them wait here: one read's requests for rows the
   * proxy composes itself (system.local) would otherwise queue about 25 times their size.
   */
  #handle(frames: readonly Frame[], from: number): void {
    for (let i = from; i < frames.length; i++) {
      const frame = frames[i]!;
      if (i > from && this.#writer.pendingBytes > ANSWERS_HELD && this.#answersWait()) {
        this.socket.pause();
        this.#holding = true;
        this.socket.once('drain', () => {
          this.#holding = false;
          if (this.#closed) return;
          this.socket.resume();
          this.#handle(frames, i);
          this.#endIfAnswered();
        });
        return;
      }
      if (frame.response) {
        this.#fatal(new ProtocolError(`a client sent a response frame (opcode 0x${frame.opcode.toString(16)})`));
        return;
      }
      if (!isSupportedVersion(frame.version)) {
        this.#fatal(new UnsupportedVersionError(frame.version, frame.stream, unsupportedVersion(frame.version)));
        return;
      }
      if (this.#out.version === undefined) this.#out.version = frame.version;
      else if (frame.version !== this.#out.version) {
        this.#fatal(new ProtocolError(`protocol version changed from v${this.#out.version} to v${frame.version} on one connection`));
        return;
      }
      if (frame.stream < 0) {
        this.#out.reply(frame, { error: { code: ErrorCode.PROTOCOL_ERROR, message: `negative stream id ${frame.stream} in a request` } });
        continue;
      }
      try {
        this.#dispatch(frame);
      } catch (error) {
        this.#out.failure(frame, error);
      }
    }
    this.#throttle();
  }

  /** This turn's answers go out now; whether they wait for the client to read (the kernel took too few). */
  #answersWait(): boolean {
    this.#writer.flush();
    return this.socket.writableNeedDrain;
  }

  /** Counts this client's partly received frame in the proxy-wide budget; over it, the client is refused. */
  #holdBuffered(): boolean {
    const now = this.#decoder.buffered;
    if (this.#context.buffers.move(this.#buffered, now)) {
      this.#buffered = now;
      return true;
    }
    const { limit } = this.#context.buffers;
    this.#fatal(
      new ProtocolError(`The proxy buffers ${limit} bytes of partly received requests at most, all clients together; retry`, {
        code: ErrorCode.OVERLOADED,
      }),
    );
    return false;
  }

  /**
   * Backpressure: while the backend connection cannot take more, or this client does not read its
   * answers, stop reading its requests (they would only pile up in memory here).
   */
  #throttle(): void {
    const backend = this.#congestedBackend();
    const backendFull = backend !== undefined;
    if (!backendFull && !this.socket.writableNeedDrain) return;
    this.socket.pause();
    const resume = () => {
      if (this.#closed) return;
      this.socket.resume();
      this.#endIfAnswered();
    };
    if (backendFull) backend.onDrain(resume);
    else this.socket.once('drain', resume);
  }

  /** A backend connection of this client that cannot take more requests now, if any. */
  #congestedBackend(): { onDrain(resume: () => void): void } | undefined {
    return this.#backend !== undefined && !this.#backend.closed && this.#backend.congested
      ? this.#backend
      : this.#route?.connections.congested();
  }

  #dispatch(frame: Frame): void {
    const started = performance.now();
    const refusal = this.#handshake.refusal(frame.opcode);
    if (refusal) return this.#out.reply(frame, { error: refusal });
    switch (frame.opcode) {
      case Opcode.OPTIONS:
        return this.#out.send(frame, Opcode.SUPPORTED, encodeSupported({ options: this.#context.supportedOptions() }));
      case Opcode.STARTUP:
        return this.#startup(frame, started);
      case Opcode.REGISTER: {
        const added = decodeRegister(this.#body(frame)).eventTypes.filter((type) => !this.registered.has(type));
        for (const type of added) this.registered.add(type);
        this.#out.send(frame, Opcode.READY, Buffer.alloc(0));
        // Drivers read system.peers, then REGISTER: changes in between would be lost (Cassandra
        // loses them too). Tell this client what changed since the tables it last read, in the
        // types it registers for now: those it had registered before were sent as they happened.
        if (added.length === 0) return;
        for (const event of this.#context.eventsSince(this.servedView)) if (added.includes(event.type)) this.pushEvent(event);
        return;
      }
      case Opcode.QUERY: {
        // The hot path reads only the statement text; parameters are decoded for our own tables.
        const body = this.#checkedBody(frame);
        const reader = new Reader(body);
        const statement = readStatement(reader);
        // Past the classified prefix a statement is searched whole: "system" may come after it.
        const text = statement.complete ? statement.text : readStatement(new Reader(body), Infinity).text;
        if (!this.#context.intercept.targets(text, this.#keyspace.current, namesKeyspace(reader, frame.version))) {
          this.#keyspace.forwarding(frame, text);
          return this.#forward(frame, started);
        }
        // A long write is read whole: its text says which table it writes (a SELECT that long is no system-table read).
        if (!statement.complete && !isWriteStatement(statement.text)) {
          return this.#out.reply(frame, {
            error: { code: ErrorCode.INVALID, message: `A system-table statement may be ${statement.limit} bytes long at most` },
          });
        }
        const query = decodeQuery(body, frame.version);
        const answer = this.#context.intercept.query(
          query.query,
          query.parameters.keyspace ?? this.#keyspace.current,
          query.parameters,
          this,
        );
        if (answer && !('rewrite' in answer)) return this.#answer(frame, answer, started);
        // A v5 QUERY that names its keyspace comes this way, a USE among them.
        this.#keyspace.forwarding(frame, query.query);
        return this.#forward(frame, started, answer ? { rewrite: answer.rewrite } : undefined);
      }
      case Opcode.PREPARE: {
        const prepare = decodePrepare(this.#checkedBody(frame), frame.version);
        const keyspace = prepare.keyspace ?? this.#keyspace.current;
        const answer = this.#context.intercept.prepare(prepare.query, keyspace, this);
        if (answer) return this.#answer(frame, answer, started);
        return this.#forward(frame, started, { prepare: { query: prepare.query, keyspace } });
      }
      case Opcode.EXECUTE: {
        const body = this.#checkedBody(frame);
        // The [short bytes] id, read in place (the check above vetted its length): no view per request.
        const idEnd = 2 + body.readUInt16BE(0);
        if (!this.#context.intercept.owns(body, 2, idEnd)) {
          // An id that was never prepared through this proxy may name any statement the backend
          // has cached (a read of a table the proxy refuses, prepared by a direct client): the
          // client prepares it here first, where the proxy sees the statement. Drivers do so on UNPREPARED.
          const statement = this.#prepared.find(body, 2, idEnd);
          if (!statement) return this.#out.reply(frame, { error: unpreparedHere(body.subarray(2, idEnd)) });
          this.#keyspace.forwarding(frame, statement.query);
          return this.#forward(frame, started, EXECUTE, this.#route?.target(body, frame.version, statement, this.#backend));
        }
        const execute = decodeExecute(body, frame.version);
        const answer = this.#context.intercept.execute(execute.id, execute.parameters, this);
        if (answer) return this.#answer(frame, answer, started);
        return this.#forward(frame, started, EXECUTE);
      }
      case Opcode.BATCH: {
        const refusal = batchRefusal(
          this.#checkedBody(frame),
          frame.version,
          this.#keyspace.current,
          this.#context.intercept,
          this.#prepared,
        );
        return refusal ? this.#out.reply(frame, refusal) : this.#forward(frame, started);
      }
      case Opcode.AUTH_RESPONSE:
        this.#route?.connections.authResponseSent(this.#checkedBody(frame), frame.flags);
        return this.#forward(frame, started, {
          answered: (opcode) => {
            this.#route?.connections.authAnswered(opcode);
            this.#handshake.authAnswered(opcode);
            if (opcode === Opcode.AUTH_SUCCESS) this.#context.established(this);
          },
        });
      default:
        // Response opcodes and unknown ones are never forwarded: the backend must not see garbage.
        return this.#out.reply(frame, {
          error: { code: ErrorCode.PROTOCOL_ERROR, message: `Unexpected opcode 0x${frame.opcode.toString(16)} in a request` },
        });
    }
  }

  /** The request's message: decompressed, and past any custom payload. */
  #body(frame: Frame): Buffer {
    if (this.#messageOf === frame) return this.#message!;
    const body = requestMessage(frame, this.#out.codec, this.#context.config.limits.maxFrameBytes);
    this.#messageOf = frame;
    this.#message = body;
    return body;
  }

  /**
   * The message of a request that may be forwarded, checked so that it cannot harm the node (see
   * request-check.ts); requestMessage has already read the custom payload map in front of it.
   */
  #checkedBody(frame: Frame): Buffer {
    const body = this.#body(frame);
    checkForwardedRequest(frame.opcode, body, frame.version);
    return body;
  }

  async #backendConnection(): Promise<BackendConnection> {
    if (this.#backend && !this.#backend.closed) return this.#backend;
    this.#connecting ??= this.#context
      .connectBackend(this.#out.version!, () => {
        // The node went away: this client reconnects, as it would to a failed server.
        if (!this.#closed) this.close();
      })
      .then((connection) => {
        // The client left while its node was being chosen: nothing else would close this one.
        if (this.#closed) {
          connection.close();
          throw new Error('the client connection closed');
        }
        this.#backend = connection;
        return connection;
      })
      .finally(() => {
        this.#connecting = undefined;
      });
    return this.#connecting;
  }

  /** STARTUP: settle compression, connect to a backend node, forward; v5 then switches to segments. */
  #startup(frame: Frame, started: number): void {
    const startup = decodeStartup(this.#body(frame));
    this.#driverName = startup.options.get('DRIVER_NAME');
    const settled = startupCompression(startup.options.get('COMPRESSION'), frame.version, (name) => this.#context.codec(name));
    if ('refusal' in settled) return this.#out.reply(frame, { error: { code: ErrorCode.PROTOCOL_ERROR, message: settled.refusal } });
    const compression = settled.name;
    // v5 compresses segments, not frame bodies.
    if (frame.version < 5) this.#out.codec = settled.codec;
    this.#handshake.startupSent();
    this.#route?.connections.close();
    const { router, config, metrics } = this.#context;
    this.#route = router
      ? new ReplicaRoute(
          router,
          new ReplicaConnections(frame.version, {
            connect: (node, version, onClose) => this.#context.connectNode(node, version, onClose),
            timeout: config.backend.requestTimeout,
            retryAfter: config.backend.connectTimeout,
          }),
          { replica: metrics.routedToReplica, ordinary: metrics.routedOrdinary },
        )
      : undefined;
    this.#route?.connections.startupSent(frame.body, frame.flags, compression === 'lz4');
    this.#forward(frame, started, {
      answered: (opcode, response) => {
        this.#route?.connections.startupAnswered(opcode, opcode === Opcode.AUTHENTICATE ? this.#authenticator(response) : undefined);
        this.#handshake.startupAnswered(opcode);
        if (opcode === Opcode.READY) this.#context.established(this);
        if (frame.version < 5 || (opcode !== Opcode.READY && opcode !== Opcode.AUTHENTICATE)) return;
        // Both directions frame everything after this answer in segments.
        const lz4 = compression === 'lz4';
        this.#backend?.useSegments(lz4);
        this.#writer.useSegments(lz4);
        this.#decoder = new SegmentedFrameDecoder({ lz4, maxBodyLength: this.#context.config.limits.maxFrameBytes });
      },
    });
  }

  /**
   * Forwards `frame` and relays the answer. Once the backend connection is open this is
   * synchronous up to the write: no promise per request.
   */
  #forward(frame: Frame, started: number, forwarding?: Forwarding, target?: RouteTarget): void {
    const { config, metrics } = this.#context;
    // A draining proxy keeps forwarding (OVERLOADED would fail a non-idempotent request: drivers do
    // not retry it); the drain moves drivers away instead (drain.ts).
    if (this.#inFlight >= config.limits.maxInFlightPerConnection) {
      metrics.errors.inc({ kind: 'overloaded' });
      return this.#out.reply(frame, {
        error: {
          code: ErrorCode.OVERLOADED,
          message: `Too many requests in flight on this connection (${config.limits.maxInFlightPerConnection})`,
        },
      });
    }
    this.#inFlight++;
    if (target instanceof Promise) return this.#relayWhenOpen(target, frame, started, forwarding);
    const backend = target ?? this.#backend;
    if (backend && !backend.closed) return this.#relay(backend, frame, started, forwarding);
    this.#backendConnection().then(
      (connection) => this.#relay(connection, frame, started, forwarding),
      (error: unknown) => this.#fail(frame, error),
    );
  }

  /** A routed EXECUTE whose connection to its replica is being opened (the first to that node). */
  #relayWhenOpen(connection: Promise<BackendConnection | undefined>, frame: Frame, started: number, forwarding?: Forwarding): void {
    void connection.then((opened) => {
      if (this.#closed) return this.#fail(frame, new BackendConnectionError('the client connection closed'));
      // It could not be opened: the client's own connection takes the request.
      const backend = opened && !opened.closed ? opened : this.#backend;
      if (!backend || backend.closed) return this.#fail(frame, new BackendConnectionError('the backend connection closed'));
      this.#relay(backend, frame, started, forwarding);
    });
  }

  #authenticator(response: Frame): string | undefined {
    try {
      return decodeAuthenticate(this.#out.open(response)).authenticator;
    } catch {
      return undefined;
    }
  }

  #relay(backend: BackendConnection, frame: Frame, started: number, forwarding: Forwarding | undefined): void {
    // v5 ignores the frame compression flag (segments compress): the backend is not shown it either.
    const flags = frame.version >= 5 ? frame.flags & ~FrameFlag.COMPRESSION : frame.flags;
    backend.send(frame.opcode, frame.body, flags, this.#context.config.backend.requestTimeout, (error, response) => {
      if (error) return this.#fail(frame, error);
      // A DDL's answer waits until the nodes agree: the driver's next statement may go to another node.
      if (isSchemaChangeResult(response!, this.#out.open)) {
        const deliver = () => this.#deliver(frame, response!, started, forwarding);
        this.#context.awaitSchemaAgreement(backend, this.#out.open).then(deliver, deliver);
        return;
      }
      if (response!.opcode === Opcode.ERROR && forwarding?.execute) {
        const message = this.#body(frame);
        const id = message.subarray(2, 2 + message.readUInt16BE(0));
        recoverUnprepared(this.#recovery, backend, frame, response!, id).then(
          (answer) => this.#deliver(frame, answer, started, forwarding),
          (failure: unknown) => this.#fail(frame, failure),
        );
        return;
      }
      this.#deliver(frame, response!, started, forwarding);
      this.#holdBackend(backend);
    });
  }

  /**
   * The client does not read its answers: stop reading the backend's until it does, so they wait
   * in the node and the kernel, not in this process.
   */
  #holdBackend(backend: BackendConnection): void {
    if (this.#closed || backend.paused || !this.socket.writableNeedDrain) return;
    backend.pause();
    this.socket.once('drain', () => backend.resume());
  }

  /** The backend's answer to a forwarded request goes to the client, under the client's stream id. */
  #deliver(frame: Frame, response: Frame, started: number, forwarding: Forwarding | undefined): void {
    this.#inFlight--;
    this.#endIfAnswered();
    try {
      if (forwarding?.prepare && response.opcode === Opcode.RESULT) this.#rememberPrepared(response, forwarding.prepare);
      if (frame.opcode === Opcode.QUERY || frame.opcode === Opcode.EXECUTE) this.#keyspace.answered(frame, response, this.#out.open);
    } catch {
      // An undecodable RESULT is the client's to judge; the proxy only loses a cache entry.
    }
    if (forwarding?.rewrite && response.opcode === Opcode.RESULT) {
      this.#out.rewritten(frame, response, forwarding.rewrite);
    } else if (response.opcode === Opcode.ERROR) {
      this.#out.relayedError(frame, response);
    } else {
      this.#out.relayed(frame, response);
    }
    this.#context.metrics.forwardedDuration.observe((performance.now() - started) / 1e3);
    forwarding?.answered?.(response.opcode, response);
  }

  #fail(frame: Frame, error: unknown): void {
    this.#inFlight--;
    // A STARTUP no node answered leaves the connection new: the client may send STARTUP again.
    if (frame.opcode === Opcode.STARTUP) this.#handshake.startupAnswered(Opcode.ERROR);
    this.#keyspace.answered(frame, undefined, this.#out.open);
    this.#out.failure(frame, error);
    this.#endIfAnswered();
  }

  #rememberPrepared(response: Frame, statement: { query: string; keyspace: string | undefined }): void {
    rememberPrepared(this.#prepared, this.#out.open(response), statement, this.#out.version ?? 4, this.#context.router !== undefined);
    this.#context.metrics.preparedCache.set(this.#prepared.size);
  }

  #answer(frame: Frame, answer: LocalAnswer, started: number): void {
    this.#out.reply(frame, answer);
    this.#context.metrics.systemDuration.observe((performance.now() - started) / 1e3);
  }

  /**
   * Pushes an event if this client registered for its type. A client whose socket has more than
   * `maxQueued` events' worth of unsent bytes is too slow: it is dropped, so it never stalls others.
   */
  pushEvent(event: Event): boolean {
    if (this.#closed || this.#out.version === undefined || !this.registered.has(event.type)) return false;
    if (this.socket.writableLength > this.#context.config.events.maxQueued * 64) {
      this.#context.metrics.eventsDropped.inc({ type: event.type });
      this.close();
      return false;
    }
    this.#out.send({ stream: -1 }, Opcode.EVENT, encodeEvent(event, this.#out.version));
    this.#context.metrics.eventsSent.inc({ type: event.type });
    return true;
  }

  /** Answers a framing error the way the client can read, then closes: framing cannot be resynchronised. */
  #fatal(error: unknown): void {
    let protocolError = ProtocolError.is(error) ? error : new ProtocolError(String(error));
    // Drivers step down only on this exact wording.
    if (error instanceof UnsupportedVersionError) protocolError = new ProtocolError(unsupportedVersion(error.version));
    const stream = error instanceof UnsupportedVersionError ? error.stream : 0;
    // Negotiation is what drivers do at every connect: counted apart, so `protocol` stays an alert.
    this.#context.metrics.errors.inc({ kind: error instanceof UnsupportedVersionError ? 'version_negotiation' : 'protocol' });
    if (error instanceof UnsupportedVersionError && this.#out.version === undefined) {
      // The client's first frame: answer in the header layout it reads (v1/v2: 8 bytes, one-byte stream).
      this.#out.version = Math.max(3, replyVersion(error.version));
      this.#writer.write(unsupportedVersionReply(error.version, stream), Buffer.alloc(0));
    } else {
      this.#out.version ??= 4;
      this.#out.send({ stream }, Opcode.ERROR, encodeError({ code: protocolError.code, message: protocolError.message }));
    }
    this.#writer.flush();
    this.socket.end();
    // Whatever the client still sends is read and dropped, not paused: a paused socket that reads
    // into slabs stops reading, so the client's FIN would go unseen and its admission slot (a
    // handshaking one, when this was version negotiation) would stay taken until the grace below.
    this.#discardRest = true;
    this.#decoder = { push: () => [], buffered: 0 };
    // The slot stays counted until the socket closes; a client that never closes its end is destroyed.
    setTimeout(() => this.socket.destroy(), this.#context.config.connections.closeGrace).unref();
    this.#closed = true;
    this.#release();
  }

  #release(): void {
    this.#context.buffers.move(this.#buffered, 0);
    this.#buffered = 0;
    this.#backend?.close();
    this.#route?.connections.close();
    this.#context.forget(this);
  }

  /**
   * Half-closes (FIN, so no request is cut by a reset) as soon as every request this client sent
   * has its answer; the socket closes when the client closes its side (or the drain times out).
   */
  endWhenAnswered(): void {
    this.#endWhenAnswered = true;
    this.#endIfAnswered();
  }

  #endIfAnswered(): void {
    // A paused socket (backpressure) leaves requests unread in the kernel: they are not answered
    // yet, however many are counted in flight. Its resume checks again.
    if (!this.#endWhenAnswered || this.#inFlight > 0 || this.#closed || this.socket.isPaused()) return;
    // Sockets are read in the event loop's poll phase; the second setImmediate runs after a whole
    // poll phase has passed (the first may run right after the current one): a request that had
    // reached the kernel before this FIN would go out is read (and then answered) first.
    setImmediate(() => setImmediate(() => this.#endNow()));
  }

  /** The FIN, unless a request arrived meanwhile; the answer just written goes out before it, in the same flush. */
  #endNow(): void {
    if (this.#closed || this.#inFlight > 0 || this.socket.isPaused()) return;
    this.#writer.flush();
    this.#closed = true;
    this.socket.end();
    this.#backend?.close();
    this.#route?.connections.close();
    // The client's FIN (or the drain's timeout) closes the socket; until then it stays counted.
    this.socket.once('close', () => this.#context.forget(this));
  }

  close(): void {
    if (this.#closed) {
      if (!this.socket.destroyed) this.socket.destroy();
      return;
    }
    this.#closed = true;
    this.socket.destroy();
    this.#release();
  }
}
