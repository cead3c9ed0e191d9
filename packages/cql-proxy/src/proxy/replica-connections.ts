import { Consistency } from '../protocol/consistency.js';
import { FrameFlag, Opcode } from '../protocol/frame.js';
import { encodeQuery } from '../protocol/requests.js';
import type { BackendAddress, BackendConnection } from './backend-connection.js';
import { nodeKey } from './node-health.js';

/** A request frame as the client sent it, kept to send again on another connection. */
interface RecordedFrame {
  readonly body: Buffer;
  readonly flags: number;
}

export interface ReplicaConnectionsOptions {
  /** Opens a connection to `node` (the backend pool: counted, closed when the node turns sick). */
  readonly connect: (node: BackendAddress, version: number, onClose: () => void) => Promise<BackendConnection>;
  readonly timeout: number;
  /** After a connection to a node could not be set up, it is not tried again for this long (ms). */
  readonly retryAfter: number;
}

/** Authenticators whose exchange is one AUTH_RESPONSE with the credentials (SASL PLAIN), safe to replay. */
const REPLAYABLE_AUTHENTICATORS = /(^|\.)PasswordAuthenticator$/;

const quoteName = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * One client's extra connections, one per backend node its requests are routed to (opened on first
 * use). Each is the client's own: its STARTUP is replayed, and when the backend asked for
 * authentication, the client's AUTH_RESPONSE too — but only for PasswordAuthenticator, whose one
 * round carries the credentials (SASL PLAIN) and means the same on every node. Any other
 * exchange (a challenge, Kerberos, LDAP with a nonce) cannot be replayed, and this client's
 * requests all stay on its first connection. The recorded credentials live only as long as the
 * client connection and are overwritten when it closes.
 *
 * Only EXECUTEs travel on these connections: a prepared statement is bound to its keyspace, so
 * the connection's keyspace matters only when the statement must be prepared there again; then
 * {@link useKeyspace} sets it first.
 */
export class ReplicaConnections {
  readonly #options: ReplicaConnectionsOptions;
  readonly #version: number;
  #startup: RecordedFrame | undefined;
  /** v5 with LZ4: segments after STARTUP's answer. */
  #lz4 = false;
  #authResponse: RecordedFrame | undefined;
  /** Whether a new connection can be authenticated as the client: known after the handshake. */
  #auth: 'pending' | 'none' | 'replayable' | 'unsupported' = 'pending';
  readonly #open = new Map<string, BackendConnection>();
  readonly #opening = new Map<string, Promise<BackendConnection | undefined>>();
  readonly #failedUntil = new Map<string, number>();
  readonly #keyspaces = new WeakMap<BackendConnection, string>();
  #closed = false;

  constructor(version: number, options: ReplicaConnectionsOptions) {
    this.#version = version;
    this.#options = options;
  }

  startupSent(body: Buffer, flags: number, lz4: boolean): void {
    this.#startup = { body: Buffer.from(body), flags };
    this.#lz4 = lz4;
  }

  /** The backend answered STARTUP: READY, or AUTHENTICATE naming its authenticator. */
  startupAnswered(opcode: number, authenticator: string | undefined): void {
    if (opcode === Opcode.READY) this.#auth = 'none';
    else if (opcode === Opcode.AUTHENTICATE && authenticator && REPLAYABLE_AUTHENTICATORS.test(authenticator)) this.#auth = 'pending';
    else this.#auth = 'unsupported';
  }

  authResponseSent(body: Buffer, flags: number): void {
    // A second round is not PLAIN: nothing can be replayed.
    if (this.#authResponse) this.#auth = 'unsupported';
    else this.#authResponse = { body: Buffer.from(body), flags };
  }

  authAnswered(opcode: number): void {
    if (opcode === Opcode.AUTH_SUCCESS && this.#auth === 'pending' && this.#authResponse) this.#auth = 'replayable';
    else if (opcode !== Opcode.AUTH_SUCCESS) this.#auth = 'unsupported';
  }

  /** Whether requests may be routed to other nodes for this client at all. */
  get usable(): boolean {
    return !this.#closed && this.#startup !== undefined && (this.#auth === 'none' || this.#auth === 'replayable');
  }

  /**
   * This client's connection to `node`: open, being opened (resolves to undefined when it could
   * not be), or undefined when none can be had now.
   */
  connection(node: BackendAddress): BackendConnection | Promise<BackendConnection | undefined> | undefined {
    if (!this.usable) return undefined;
    const key = nodeKey(node);
    const open = this.#open.get(key);
    if (open && !open.closed) return open;
    const opening = this.#opening.get(key);
    if (opening) return opening;
    if ((this.#failedUntil.get(key) ?? 0) > Date.now()) return undefined;
    const promise = this.#connect(node, key).finally(() => this.#opening.delete(key));
    this.#opening.set(key, promise);
    return promise;
  }

  /** Whether `connection` is one of these (not the client's first connection). */
  owns(connection: BackendConnection): boolean {
    return this.#keyspaces.has(connection);
  }

  /** Stream ids in use over all of them. */
  get inFlight(): number {
    let n = 0;
    for (const connection of this.#open.values()) n += connection.inFlight;
    return n;
  }

  /** One whose send buffer is full, if any (the client then stops reading until it drains). */
  congested(): BackendConnection | undefined {
    for (const connection of this.#open.values()) if (!connection.closed && connection.congested) return connection;
    return undefined;
  }

  /** Before a statement is prepared again on `connection`: its keyspace, so the id comes out the same. */
  async useKeyspace(connection: BackendConnection, keyspace: string): Promise<void> {
    if (this.#keyspaces.get(connection) === keyspace) return;
    const answer = await connection.request(
      Opcode.QUERY,
      encodeQuery({ query: `USE ${quoteName(keyspace)}`, parameters: { consistency: Consistency.ONE } }, this.#version),
      { timeout: this.#options.timeout },
    );
    if (answer.opcode === Opcode.RESULT) this.#keyspaces.set(connection, keyspace);
  }

  async #connect(node: BackendAddress, key: string): Promise<BackendConnection | undefined> {
    let connection: BackendConnection | undefined;
    try {
      connection = await this.#options.connect(node, this.#version, () => {
        if (this.#open.get(key) === connection) this.#open.delete(key);
      });
      await this.#handshake(connection);
      if (this.#closed) throw new Error('the client connection closed');
      this.#keyspaces.set(connection, '');
      this.#open.set(key, connection);
      return connection;
    } catch {
      connection?.close();
      this.#failedUntil.set(key, Date.now() + this.#options.retryAfter);
      return undefined;
    }
  }

  /** The client's own handshake, replayed: STARTUP, then its credentials if the node asks. */
  async #handshake(connection: BackendConnection): Promise<void> {
    const { timeout } = this.#options;
    const startup = this.#startup!;
    const answer = await connection.request(Opcode.STARTUP, startup.body, { flags: startup.flags, timeout });
    if (answer.opcode !== Opcode.READY && answer.opcode !== Opcode.AUTHENTICATE)
      throw new Error(`STARTUP answered 0x${answer.opcode.toString(16)}`);
    if (this.#version >= 5) connection.useSegments(this.#lz4);
    if (answer.opcode === Opcode.READY) return;
    const auth = this.#authResponse;
    if (this.#auth !== 'replayable' || !auth) throw new Error('the node asks for authentication the proxy cannot replay');
    const flags = this.#version >= 5 ? auth.flags & ~FrameFlag.COMPRESSION : auth.flags;
    const done = await connection.request(Opcode.AUTH_RESPONSE, auth.body, { flags, timeout });
    if (done.opcode !== Opcode.AUTH_SUCCESS) throw new Error(`AUTH_RESPONSE answered 0x${done.opcode.toString(16)}`);
  }

  close(): void {
    this.#closed = true;
    for (const connection of this.#open.values()) connection.close();
    this.#open.clear();
    this.#authResponse?.body.fill(0);
    this.#authResponse = undefined;
  }
}
