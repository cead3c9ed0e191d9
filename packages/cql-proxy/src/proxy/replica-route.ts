import { executeValues } from '../routing/execute-values.js';
import type { ReplicaRouter } from '../routing/replica-router.js';
import type { BackendConnection } from './backend-connection.js';
import type { PreparedStatement } from './prepared-cache.js';
import type { ReplicaConnections } from './replica-connections.js';

/** Where a routed EXECUTE goes: a connection, one being opened (undefined: it could not be), or the client's own (undefined). */
export type RouteTarget = BackendConnection | Promise<BackendConnection | undefined> | undefined;

/** The two children of `muster_proxy_routed_executes_total`, bound once. */
export interface RouteCounters {
  readonly replica: { inc(): void };
  readonly ordinary: { inc(): void };
}

/**
 * One client's choice of node for each prepared EXECUTE. The counters say where requests went:
 * `replica` when the node it is sent to holds its partition, `ordinary` when it takes the client's
 * own connection without that being known (key not bound by position, keyspace strategy unknown,
 * no healthy local replica, credentials that cannot be replayed).
 *
 * When the client's own node is a local replica of every partition of the statement's keyspace
 * (a one-node data center, or a replication factor covering every local node) the request goes
 * there and counts as `replica` without its key being read or hashed: the answer could not differ.
 */
export class ReplicaRoute {
  readonly #router: ReplicaRouter;
  readonly #connections: ReplicaConnections;
  readonly #counters: RouteCounters;

  constructor(router: ReplicaRouter, connections: ReplicaConnections, counters: RouteCounters) {
    this.#router = router;
    this.#connections = connections;
    this.#counters = counters;
  }

  /** The client's connections to nodes other than its own. */
  get connections(): ReplicaConnections {
    return this.#connections;
  }

  /** Where the EXECUTE in `body` goes, `primary` being the client's own connection. */
  target(body: Buffer, version: number, statement: PreparedStatement, primary: BackendConnection | undefined): RouteTarget {
    const key = statement.partitionKey;
    if (!key || !primary || primary.closed) return this.#ordinary();
    if (this.#router.holdsEveryPartition(key.keyspace, primary.address)) {
      this.#counters.replica.inc();
      return undefined;
    }
    if (!this.#connections.usable) return this.#ordinary();
    const components = executeValues(body, version, key.indexes);
    const node = components && this.#router.replicaFor(key.keyspace, components);
    if (!node) return this.#ordinary();
    if (primary.address.host === node.host && primary.address.port === node.port) {
      this.#counters.replica.inc();
      return undefined;
    }
    const connection = this.#connections.connection(node);
    if (!connection) return this.#ordinary();
    this.#counters.replica.inc();
    return connection;
  }

  #ordinary(): undefined {
    this.#counters.ordinary.inc();
    return undefined;
  }
}
