import { BackendConnection, BackendConnectionError, type BackendAddress, type BackendTls } from './backend-connection.js';
import type { BackendCluster } from './backend-cluster.js';
import { nodeKey, type NodeHealth } from './node-health.js';

/**
 * Spreads client connections over the backend's local-DC nodes, round robin. A node that fails
 * to connect is skipped for this client and the next one is tried; a client is never pinned to a
 * node that does not answer. Sick nodes (see {@link NodeHealth}) are not chosen while a healthy one
 * is left, and when a node turns sick while another is healthy the client connections on it are
 * closed: their requests would wait out the request timeout, and the drivers reconnect, to a
 * healthy node.
 */
export class BackendPool {
  readonly #cluster: BackendCluster;
  readonly #connectTimeout: number;
  readonly #maxBodyLength: number;
  readonly #heartbeatInterval: number;
  readonly #onCount: (node: string, delta: number) => void;
  readonly #tls: BackendTls | undefined;
  #next = 0;
  /** Open connections by node (`host:port`), to close when the node turns sick. */
  readonly #byNode = new Map<string, Set<BackendConnection>>();

  constructor(
    cluster: BackendCluster,
    options: {
      connectTimeout: number;
      maxBodyLength: number;
      heartbeatInterval: number;
      tls?: BackendTls;
      onCount: (node: string, delta: number) => void;
    },
  ) {
    this.#cluster = cluster;
    this.#connectTimeout = options.connectTimeout;
    this.#maxBodyLength = options.maxBodyLength;
    this.#heartbeatInterval = options.heartbeatInterval;
    this.#onCount = options.onCount;
    this.#tls = options.tls;
    cluster.health.onChange((state) => {
      // Moving clients off a sick node only helps when a healthy one is left to move to; with every
      // node sick (one node in a long GC pause) closing would fail their in-flight requests for nothing.
      if (state.healthy || !this.#cluster.view.nodes.some((n) => this.#health.isHealthy(n))) return;
      for (const connection of [...(this.#byNode.get(state.node) ?? [])]) connection.close();
    });
  }

  get #health(): NodeHealth {
    return this.#cluster.health;
  }

  async connect(version: number, onClose: () => void): Promise<BackendConnection> {
    const all = this.#cluster.view.nodes;
    const start = this.#next++ % Math.max(1, all.length);
    const rotated = all.map((_, i) => all[(start + i) % all.length]!);
    // When every node looks sick, try them all anyway: better a slow answer than none.
    const healthy = rotated.filter((n) => this.#health.isHealthy(n));
    const nodes = healthy.length > 0 ? healthy : rotated;
    const failures: string[] = [];
    for (const node of nodes) {
      let handedOut = false;
      try {
        const connection = await this.#open(node, version, () => handedOut && onClose());
        // It may have turned sick while this connection was being opened: try the next one.
        if (!this.#health.isHealthy(node) && healthy.length > 0) {
          connection.close();
          failures.push(`${nodeKey(node)} turned sick`);
          continue;
        }
        handedOut = true;
        return connection;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    throw new BackendConnectionError(`no backend node accepted a connection: ${failures.join('; ') || 'no nodes known'}`);
  }

  /**
   * A connection to one given node (a replica a request is routed to); like every connection of
   * the pool it is closed when the node turns sick. `onClose` is called when it closes.
   */
  async connectTo(node: BackendAddress, version: number, onClose: () => void): Promise<BackendConnection> {
    if (!this.#health.isHealthy(node)) throw new BackendConnectionError(`${nodeKey(node)} is sick`);
    return this.#open(node, version, onClose);
  }

  async #open(node: BackendAddress, version: number, onClose: () => void): Promise<BackendConnection> {
    const label = nodeKey(node);
    try {
      const connection = await BackendConnection.connect({
        host: node.host,
        port: node.port,
        version,
        connectTimeout: this.#connectTimeout,
        maxBodyLength: this.#maxBodyLength,
        heartbeatInterval: this.#heartbeatInterval,
        ...(this.#tls ? { tls: this.#tls } : {}),
        onTimeout: () => this.#health.suspect(node),
        onClose: () => {
          this.#byNode.get(label)?.delete(connection);
          this.#onCount(label, -1);
          onClose();
        },
      });
      this.#onCount(label, 1);
      let open = this.#byNode.get(label);
      if (!open) this.#byNode.set(label, (open = new Set()));
      open.add(connection);
      return connection;
    } catch (error) {
      this.#health.connectFailed(node, (error as Error).message);
      throw error;
    }
  }
}
