import { decodeCell } from '../protocol/cells.js';
import { Consistency } from '../protocol/consistency.js';
import { FrameFlag, Opcode, type Frame } from '../protocol/frame.js';
import { encodeQuery } from '../protocol/requests.js';
import { decodeResult } from '../protocol/result.js';
import type { BackendConnection } from './backend-connection.js';

/** RESULT kind 0x0005. */
const SCHEMA_CHANGE_KIND = 5;
/** A SCHEMA_CHANGE result is a few names long; a compressed body bigger than this is something else. */
const MAX_SCHEMA_CHANGE_BYTES = 1024;
const EXTRAS = FrameFlag.TRACING | FrameFlag.WARNING | FrameFlag.CUSTOM_PAYLOAD;

/**
 * Whether a forwarded answer is a DDL's SCHEMA_CHANGE result. Cheap on the hot path: the kind is
 * the first int of the body; a compressed body is only inflated when it is small enough to be one.
 */
export function isSchemaChangeResult(response: Frame, body: (frame: Frame) => Buffer): boolean {
  if (response.opcode !== Opcode.RESULT) return false;
  // A tracing id, warnings or a custom payload come before the kind (a DDL with a replication warning).
  if ((response.flags & (FrameFlag.COMPRESSION | EXTRAS)) === 0)
    return response.body.length >= 4 && response.body.readInt32BE(0) === SCHEMA_CHANGE_KIND;
  if (response.flags & FrameFlag.COMPRESSION && response.body.length > MAX_SCHEMA_CHANGE_BYTES) return false;
  let plain: Buffer;
  try {
    plain = body(response);
  } catch {
    // Not readable here (inflated past limits.maxFrameBytes, which bounds requests): not a DDL's
    // few names, and thrown here it would escape the backend connection's answer handler.
    return false;
  }
  return plain.length >= 4 && plain.readInt32BE(0) === SCHEMA_CHANGE_KIND;
}

/**
 * The schema version of the node behind `connection` (the DDL's coordinator, which applied the
 * change before it answered). Asked on the client's own connection, so it is that node's answer.
 */
export async function coordinatorSchemaVersion(
  connection: BackendConnection,
  body: (frame: Frame) => Buffer,
  timeout: number,
): Promise<string | undefined> {
  const query = encodeQuery(
    { query: "SELECT schema_version FROM system.local WHERE key='local'", parameters: { consistency: Consistency.ONE } },
    connection.version,
  );
  const frame = await connection.request(Opcode.QUERY, query, { timeout });
  if (frame.opcode !== Opcode.RESULT) return undefined;
  const result = decodeResult(body(frame), connection.version);
  if (result.kind !== 'Rows' || !result.metadata.columns?.[0]) return undefined;
  const cell = decodeCell(result.metadata.columns[0].type, result.rows[0]?.[0] ?? null);
  return cell === null ? undefined : String(cell);
}

/** Schema versions as the control node sees them: its own, and each peer's (by address) from gossip. */
export interface SchemaVersions {
  readonly local: string | undefined;
  readonly peers: ReadonlyMap<string, string | undefined>;
}

export interface SchemaAgreementOptions {
  /** Reads the versions over the control connection. */
  readonly read: () => Promise<SchemaVersions>;
  /** The peer addresses that must agree (the local-DC nodes the proxy routes to and finds healthy). */
  readonly required: () => readonly string[];
  readonly pollInterval: number;
}

interface Waiter {
  readonly target: string;
  readonly deadline: number;
  readonly resolve: (agreed: boolean) => void;
}

/**
 * Waits, bounded, until the backend nodes agree on a schema version, as drivers do after a DDL
 * (maxSchemaAgreementWaitSeconds). Drivers cannot do it through the proxy, which shows them one
 * version, so the proxy does it for them before it hands back the DDL's answer: the next statement
 * may go, over another of the driver's connections, to another node, which must know the table.
 * Agreement means the control node and every required peer report the coordinator's version, so a
 * control node that has not heard of the change yet never passes for agreement. Concurrent waits
 * share one poll.
 */
export class SchemaAgreement {
  readonly #options: SchemaAgreementOptions;
  readonly #waiters = new Set<Waiter>();
  #polling = false;

  constructor(options: SchemaAgreementOptions) {
    this.#options = options;
  }

  /** Resolves true once the nodes agree on `target`, false after `timeout` ms (never rejects). */
  wait(target: string, timeout: number): Promise<boolean> {
    return new Promise((resolve) => {
      this.#waiters.add({ target, deadline: Date.now() + timeout, resolve });
      if (!this.#polling) void this.#poll();
    });
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      while (this.#waiters.size > 0) {
        let versions: SchemaVersions | undefined;
        try {
          versions = await this.#options.read();
        } catch {
          // The control connection is failing over; the deadline bounds the wait.
        }
        const now = Date.now();
        for (const waiter of [...this.#waiters]) {
          const agreed = versions !== undefined && this.#agree(versions, waiter.target);
          if (!agreed && waiter.deadline > now) continue;
          this.#waiters.delete(waiter);
          waiter.resolve(agreed);
        }
        if (this.#waiters.size > 0) await new Promise((r) => setTimeout(r, this.#options.pollInterval));
      }
    } finally {
      this.#polling = false;
    }
  }

  #agree(versions: SchemaVersions, target: string): boolean {
    if (versions.local !== target) return false;
    for (const host of this.#options.required()) {
      if (!versions.peers.has(host)) continue; // the control node itself
      if (versions.peers.get(host) !== target) return false;
    }
    return true;
  }
}
