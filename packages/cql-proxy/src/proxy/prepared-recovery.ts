import { decodeError } from '../protocol/error-message.js';
import { ErrorCode } from '../protocol/errors.js';
import { Opcode, type Frame } from '../protocol/frame.js';
import { encodePrepare } from '../protocol/requests.js';
import { preparedPartitionKey } from '../routing/prepared-key.js';
import type { BackendConnection } from './backend-connection.js';
import type { PreparedCache } from './prepared-cache.js';
import type { ReplicaConnections } from './replica-connections.js';

/** What recovering an EXECUTE needs from the client connection it came through. */
export interface RecoveryScope {
  readonly prepared: PreparedCache;
  /** The client's connections to other nodes, when its EXECUTEs are routed. */
  readonly replicas: () => ReplicaConnections | undefined;
  readonly timeout: number;
  /** A response's message: decompressed, past tracing id, warnings and custom payload. */
  readonly open: (frame: Frame) => Buffer;
  /** Counts a statement prepared again. */
  readonly reprepared: () => void;
}

/**
 * A node that has not seen a statement (another node prepared it, or it restarted) answers
 * UNPREPARED: prepare it there from the remembered PREPARE and retry once, so the client never
 * notices the switch. Any other answer, or a statement the cache no longer holds, is the answer.
 * `id` is the EXECUTE's statement id.
 */
export async function recoverUnprepared(
  scope: RecoveryScope,
  backend: BackendConnection,
  request: Frame,
  response: Frame,
  id: Buffer,
): Promise<Frame> {
  const error = decodeError(scope.open(response));
  if (error.code !== ErrorCode.UNPREPARED) return response;
  const statement = scope.prepared.get(id);
  if (!statement) return response;
  const version = request.version;
  const { timeout } = scope;
  const replicas = scope.replicas();
  // A connection of its own to a replica holds the keyspace the statement was prepared in, so the
  // id comes out the same (v5 names it in the PREPARE).
  if (version < 5 && statement.keyspace && replicas?.owns(backend)) await replicas.useKeyspace(backend, statement.keyspace);
  const body = encodePrepare(statement.keyspace && version >= 5 ? statement : { query: statement.query }, version);
  const prepared = await backend.request(Opcode.PREPARE, body, { timeout });
  if (prepared.opcode !== Opcode.RESULT) return response;
  scope.reprepared();
  return backend.request(request.opcode, request.body, { flags: request.flags, timeout });
}

/**
 * A RESULT Prepared that passed through: its statement is remembered under the backend's id, with
 * where its partition key is bound when requests are routed, so that an UNPREPARED elsewhere can
 * be recovered. `message` is the RESULT's message.
 */
export function rememberPrepared(
  prepared: PreparedCache,
  message: Buffer,
  statement: { readonly query: string; readonly keyspace: string | undefined },
  version: number,
  routed: boolean,
): void {
  // RESULT Prepared: [int] kind 4, then the [short bytes] id; nothing more needs decoding.
  if (message.length < 6 || message.readInt32BE(0) !== 4) return;
  const length = message.readUInt16BE(4);
  const partitionKey = routed ? preparedPartitionKey(message, version) : undefined;
  prepared.set(Buffer.from(message.subarray(6, 6 + length)), partitionKey ? { ...statement, partitionKey } : statement);
}
