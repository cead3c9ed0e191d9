import { FrameFlag, Opcode, type Frame } from '../protocol/frame.js';
import { CqlLexer, CqlSyntaxError, firstWord } from '../virtual/cql-lexer.js';
import { isSystemKeyspace } from '../virtual/system-keyspaces.js';

/** RESULT kind 0x0003: [int] kind, then the keyspace as a [string]. */
const SET_KEYSPACE_KIND = 3;
/** A Set_keyspace result is one name long; a compressed body bigger than this is something else. */
const MAX_SET_KEYSPACE_BYTES = 1024;
const EXTRAS = FrameFlag.TRACING | FrameFlag.WARNING | FrameFlag.CUSTOM_PAYLOAD;

/**
 * The keyspace a forwarded answer switched the connection to, or undefined. A `USE` runs as a
 * QUERY or as the EXECUTE of a prepared `USE` (Cassandra answers both Set_keyspace); the proxy must
 * follow both, since it judges unqualified names (`SELECT peer FROM peers`) by the keyspace in use.
 * Cheap on the hot path: the kind is the first int of a plain body; a compressed body is inflated
 * only when it is small enough to be one.
 */
export function keyspaceSet(response: Frame, body: (frame: Frame) => Buffer): string | undefined {
  if (response.opcode !== Opcode.RESULT) return undefined;
  let plain = response.body;
  if (response.flags & (FrameFlag.COMPRESSION | EXTRAS)) {
    if (response.flags & FrameFlag.COMPRESSION && response.body.length > MAX_SET_KEYSPACE_BYTES) return undefined;
    try {
      plain = body(response);
    } catch {
      return undefined;
    }
  }
  if (plain.length < 6 || plain.readInt32BE(0) !== SET_KEYSPACE_KIND) return undefined;
  return plain.toString('utf8', 6, 6 + plain.readUInt16BE(4));
}

/** The keyspace a `USE` statement names, or undefined when `query` is not one the proxy can read. */
export function useTarget(query: string): string | undefined {
  // Every EXECUTE asks: a statement that starts with a letter other than u is not a USE, known
  // from one character instead of a scan and a lower-cased copy of its first word.
  const first = query.charCodeAt(0) | 0x20;
  if (first >= 0x61 && first <= 0x7a && first !== 0x75) return undefined;
  if (firstWord(query) !== 'use') return undefined;
  try {
    const lexer = new CqlLexer(query);
    lexer.next();
    const name = lexer.next();
    return name.kind === 'identifier' ? name.text : undefined;
  } catch (error) {
    if (error instanceof CqlSyntaxError) return undefined;
    throw error;
  }
}

/**
 * The keyspace a client connection's unqualified names are judged by. Cassandra switches it when a
 * USE runs, and a client may send its next statement before the USE is answered (pipelined
 * `USE system` and `SELECT peer FROM peers` leaked the backend's peers in 16 of 20 tries): from the
 * moment a USE of a system keyspace is forwarded until it is answered, names are judged in that
 * keyspace. A USE of another keyspace counts once answered, so while it is in flight from a system
 * keyspace, names are still judged there (a user table named then may be refused; drivers wait for
 * their USE to be answered).
 */
export class KeyspaceInUse {
  #confirmed: string | undefined;
  /** The system keyspaces of USEs in flight, by request. */
  readonly #pending = new Map<object, string>();

  get current(): string | undefined {
    for (const keyspace of this.#pending.values()) return keyspace;
    return this.#confirmed;
  }

  /** `request` (a QUERY, or the EXECUTE of a prepared statement) with its text is being forwarded. */
  forwarding(request: object, query: string): void {
    const target = useTarget(query);
    if (target !== undefined && isSystemKeyspace(target)) this.#pending.set(request, target);
  }

  /**
   * `request` has its answer (undefined: it failed in the proxy — a timeout, a lost backend
   * connection). A USE of a system keyspace that failed in the proxy may still have run on the
   * backend (its late Set_keyspace is dropped with its stream id), so names stay judged there
   * until another USE is answered: refusing a user table then is the safe error.
   */
  answered(request: object, response: Frame | undefined, body: (frame: Frame) => Buffer): void {
    if (this.#pending.size > 0) {
      const target = this.#pending.get(request);
      this.#pending.delete(request);
      if (target !== undefined && response === undefined) this.#confirmed = target;
    }
    if (response) this.#confirmed = keyspaceSet(response, body) ?? this.#confirmed;
  }
}
