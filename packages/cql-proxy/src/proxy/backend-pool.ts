import { BackendConnection, BackendConnectionError, type BackendTls } from './backend-connection.js';
import type { BackendCluster } from './backend-cluster.js';

/**
 * Spreads client connections over the backend's local-DC nodes, round robin. A node that fails
 * to connect is skipped for this client and the next one is tried; a client is never pinned to a
 * node that does not answer.
 */
export class BackendPool {
  readonly #cluster: BackendCluster;
  readonly #connectTimeout: number;
  readonly #maxBodyLength: number;
  readonly #heartbeatInterval: number;
  readonly #onCount: (node: string, delta: number) => void;
  readonly #tls: BackendTls | undefined;
  #next = 0;

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
  }

  async connect(version: number, onClose: () => void): Promise<BackendConnection> {
    const nodes = this.#cluster.view.nodes;
    const start = this.#next++ % Math.max(1, nodes.length);
    const failures: string[] = [];
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[(start + i) % nodes.length]!;
      const label = `${node.host}:${node.port}`;
      try {
        const connection = await BackendConnection.connect({
          host: node.host,
          port: node.port,
          version,
          connectTimeout: this.#connectTimeout,
          maxBodyLength: this.#maxBodyLength,
          heartbeatInterval: this.#heartbeatInterval,
          ...(this.#tls ? { tls: this.#tls } : {}),
          onClose: () => {
            this.#onCount(label, -1);
            onClose();
          },
        });
        this.#onCount(label, 1);
        return connection;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    throw new BackendConnectionError(`no backend node accepted a connection: ${failures.join('; ') || 'no nodes known'}`);
  }
}
