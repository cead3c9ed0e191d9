import type { ProxyConfig } from '../config.js';
import type { Event } from '../protocol/event.js';
import type { Frame } from '../protocol/frame.js';
import type { VirtualView } from '../virtual/view.js';
import type { ProxyMetrics } from '../http/metrics.js';
import type { QueryParameters } from '../protocol/query-parameters.js';
import type { Result } from '../protocol/result.js';
import type { BackendConnection } from './backend-connection.js';
import type { ClientConnection, LocalAnswer } from './client-connection.js';
import type { FrameCompression } from '../protocol/compression.js';
import type { PreparedCache } from './prepared-cache.js';
import type { BufferBudget } from './buffer-budget.js';
import type { BackendFootprint } from './backend-footprint.js';
import type { BackendAddress } from './backend-connection.js';
import type { ReplicaRouter } from '../routing/replica-router.js';

/** A statement to forward whose RESULT the proxy must rewrite before the client sees it. */
export interface Rewrite {
  readonly rewrite: (result: Result) => Result;
}

/** Answers for the system tables; undefined means "not a system-table statement: forward it". */
export interface SystemTableIntercept {
  /**
   * Cheap: whether a QUERY's text may read what the proxy guards (then the whole request is
   * decoded). `namesKeyspace`: a v5 request that names its own keyspace in its parameters.
   */
  targets(query: string, keyspace: string | undefined, namesKeyspace: boolean): boolean;
  /** Whether the id `bytes[start, end)` (default: all of it) names a statement the proxy prepared itself. */
  owns(bytes: Buffer, start?: number, end?: number): boolean;
  /** How many statements the proxy prepared itself are kept, and their distinct id prefixes (both bounded). */
  preparedStatements(): { readonly statements: number; readonly prefixes: number };
  query(
    query: string,
    keyspace: string | undefined,
    parameters: QueryParameters,
    client: ClientConnection,
  ): LocalAnswer | Rewrite | undefined;
  prepare(query: string, keyspace: string | undefined, client: ClientConnection): LocalAnswer | undefined;
  execute(id: Buffer, parameters: QueryParameters, client: ClientConnection): LocalAnswer | undefined;
  /** A refusal for a query string inside a BATCH that writes a table the proxy does not pass. */
  batchStatement(query: string, keyspace: string | undefined): LocalAnswer | undefined;
}

/** What a client connection needs from the proxy around it. */
export interface ProxyContext {
  readonly config: ProxyConfig;
  readonly metrics: ProxyMetrics;
  readonly intercept: SystemTableIntercept;
  readonly prepared: PreparedCache;
  /** OPTIONS → SUPPORTED: the backend's CQL versions and the compressions both sides have. */
  supportedOptions(): Map<string, string[]>;
  codec(name: string): FrameCompression | undefined;
  /** A new connection to a local-DC backend node, spread across nodes, skipping ones that fail. */
  connectBackend(version: number, onClose: () => void): Promise<BackendConnection>;
  /** Picks the replica node for a routed EXECUTE; undefined when `routing.replicas` is off. */
  readonly router: ReplicaRouter | undefined;
  /** A new connection to this node (a replica), which is closed when the node turns sick. */
  connectNode(node: BackendAddress, version: number, onClose: () => void): Promise<BackendConnection>;
  /**
   * After a DDL answered on `coordinator`: resolves once the backend nodes agree on the schema, or
   * after `backend.schemaAgreementTimeout` (never rejects). `body` decompresses a response frame.
   */
  awaitSchemaAgreement(coordinator: BackendConnection, body: (frame: Frame) => Buffer): Promise<void>;
  draining(): boolean;
  /** Membership events from `view` (what a client last read) to the current view. */
  eventsSince(view: VirtualView | undefined): readonly Event[];
  forget(client: ClientConnection): void;
  /** The client finished its handshake (READY, or AUTH_SUCCESS after SASL): no more handshake deadline. */
  established(client: ClientConnection): void;
  /** Bytes of partly received requests, all clients together. */
  readonly buffers: BufferBudget;
  /** The backend's node addresses, host ids and tokens, which must not reach a client (in warnings). */
  backendFootprint(): BackendFootprint;
}
