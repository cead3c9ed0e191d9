import { backoffDelay, sleep } from '@muster/core/adapter';
import { decodeCell, type CellValue } from '../protocol/cells.js';
import { Consistency } from '../protocol/consistency.js';
import { decodeError } from '../protocol/error-message.js';
import { decodeEvent, type SchemaChange } from '../protocol/event.js';
import { Opcode, type Frame } from '../protocol/frame.js';
import { encodeAuthToken, encodeQuery, encodeRegister, encodeStartup } from '../protocol/requests.js';
import { decodeAuthenticate, decodeSupported } from '../protocol/responses.js';
import { decodeResult, type ColumnSpec } from '../protocol/result.js';
import { BackendConnection, BackendConnectionError, type BackendAddress, type BackendTls } from './backend-connection.js';
import { NodeHealth, nodeKey } from './node-health.js';
import { coordinatorSchemaVersion, SchemaAgreement, type SchemaVersions } from './schema-agreement.js';
import { parseReplication, type Replication } from '../routing/replication.js';
import type { RoutingTopology } from '../routing/replica-router.js';
import { ringNodes } from '../routing/ring-nodes.js';

/** How the control connection introduces itself (operators see it in system_views.clients). */
export const CONTROL_DRIVER_NAME = 'muster-cql-proxy control connection';

export interface BackendClusterOptions {
  readonly contactPoints: readonly BackendAddress[];
  readonly localDataCenter?: string;
  readonly username?: string;
  readonly password?: string;
  readonly connectTimeout: number;
  readonly requestTimeout: number;
  readonly tls?: BackendTls;
  /** Protocol version of the control connection (the highest the backend accepts is negotiated down). */
  readonly maxVersion?: number;
  /** Every node is sent OPTIONS this often (ms), and is sick when it does not answer within `probeTimeout`. */
  readonly probeInterval: number;
  readonly probeTimeout: number;
}

/** A system table as the backend has it: its columns (with the backend's types) and its rows. */
export interface BackendTable {
  readonly columns: readonly ColumnSpec[];
  readonly rows: readonly Readonly<Record<string, CellValue>>[];
}

export interface BackendNode extends BackendAddress {
  readonly dataCenter: string | undefined;
  readonly hostId: string | undefined;
}

/** What the proxy knows of the real cluster. */
export interface BackendView {
  readonly version: number;
  readonly clusterName: string;
  readonly releaseVersion: string;
  readonly cqlVersion: string;
  readonly partitioner: string;
  readonly schemaVersion: string | undefined;
  readonly localDataCenter: string;
  /** Every data center the backend's nodes are in. */
  readonly dataCenters: readonly string[];
  readonly compression: readonly string[];
  /** The contact node's system.local row and the column sets of the three system tables. */
  readonly local: BackendTable;
  readonly peersColumns: readonly ColumnSpec[];
  readonly peersV2Columns: readonly ColumnSpec[] | undefined;
  /** Nodes of the local DC, the contact node first, then the rest in address order. */
  readonly nodes: readonly BackendNode[];
  /** Every node of every DC the contact node lists, joining ones (no tokens yet) included. */
  readonly allNodes: readonly BackendNode[];
  /** Every node's tokens and the keyspaces' replication, for routing requests to replicas. */
  readonly routing: RoutingTopology;
}

export class BackendRefusedError extends Error {}

const num = (v: CellValue | undefined): string | undefined => (v === null || v === undefined ? undefined : String(v));

/**
 * The proxy's control connection to the real cluster: reads its identity and topology, keeps
 * them fresh on the backend's own events (debounced; those events are never forwarded to
 * clients, since they name real nodes), and reports schema changes for fan-out.
 */
export class BackendCluster {
  #view: BackendView | undefined;
  #connection: BackendConnection | undefined;
  readonly #options: BackendClusterOptions;
  readonly #schemaListeners = new Set<(change: SchemaChange, frame: Frame) => void>();
  readonly #closing = new AbortController();
  #refreshTimer: NodeJS.Timeout | undefined;
  #reconnecting: Promise<void> | undefined;
  /** Which nodes answer; client connections and the control connection avoid the sick ones. */
  readonly health: NodeHealth;
  /** Waits for the nodes to agree on the schema after a DDL. */
  readonly schemaAgreement: SchemaAgreement;

  constructor(options: BackendClusterOptions) {
    this.#options = options;
    this.health = new NodeHealth({
      interval: options.probeInterval,
      timeout: options.probeTimeout,
      connect: (node, onClose) =>
        BackendConnection.connect({
          ...node,
          version: this.#view?.version ?? 4,
          connectTimeout: Math.min(options.connectTimeout, options.probeTimeout),
          ...(options.tls ? { tls: options.tls } : {}),
          onClose,
        }),
    });
    // A control node that stops answering loses the control connection: topology and schema
    // events would otherwise stop silently. Closing it fails over to a healthy node.
    this.health.onChange((state) => {
      const connection = this.#connection;
      if (!state.healthy && connection && !connection.closed && nodeKey(connection.address) === state.node) connection.close();
    });
    this.schemaAgreement = new SchemaAgreement({
      read: () => this.#schemaVersions(),
      required: () => (this.#view?.nodes ?? []).filter((n) => this.health.isHealthy(n)).map((n) => n.host),
      pollInterval: 200,
    });
  }

  /** The address of the node the control connection is on, if it is open. */
  get controlNode(): string | undefined {
    const connection = this.#connection;
    return connection && !connection.closed ? nodeKey(connection.address) : undefined;
  }

  get view(): BackendView {
    if (!this.#view) throw new Error('BackendCluster.start() has not completed');
    return this.#view;
  }

  get connected(): boolean {
    return this.#connection !== undefined && !this.#connection.closed;
  }

  onSchemaChange(listener: (change: SchemaChange, frame: Frame) => void): () => void {
    this.#schemaListeners.add(listener);
    return () => this.#schemaListeners.delete(listener);
  }

  async start(): Promise<BackendView> {
    await this.#connect();
    return this.view;
  }

  async #connect(): Promise<void> {
    const errors: string[] = [];
    const known = [...(this.#view?.nodes ?? []), ...this.#options.contactPoints];
    // Sick nodes last: a hung node accepts TCP and would hold the failover for a request timeout.
    const candidates = [...known.filter((n) => this.health.isHealthy(n)), ...known.filter((n) => !this.health.isHealthy(n))];
    for (const address of candidates) {
      for (let version = this.#options.maxVersion ?? 4; version >= 3; version--) {
        try {
          const connection = await this.#open(address, version);
          if (this.#closing.signal.aborted) {
            connection.close();
            return;
          }
          this.#connection = connection;
          this.#view = await this.#read(connection);
          this.health.track(this.#view.nodes);
          if (!/Murmur3Partitioner$/.test(this.#view.partitioner)) {
            connection.close();
            throw new BackendRefusedError(
              `the backend uses ${this.#view.partitioner}; the proxy presents a Murmur3 token ring and refuses other partitioners`,
            );
          }
          return;
        } catch (error) {
          if (error instanceof BackendRefusedError) throw error;
          const message = (error as Error).message;
          errors.push(`${address.host}:${address.port} v${version}: ${message}`);
          // Only a version refusal is worth another try on the same node.
          if (!/protocol version/i.test(message)) break;
        }
      }
    }
    throw new BackendConnectionError(`no backend node accepted a control connection:\n  ${errors.join('\n  ')}`);
  }

  async #open(address: BackendAddress, version: number): Promise<BackendConnection> {
    const connection = await BackendConnection.connect(
      {
        ...address,
        version,
        connectTimeout: this.#options.connectTimeout,
        ...(this.#options.tls ? { tls: this.#options.tls } : {}),
        // The control connection is never idle for long: a half-open one is found within seconds.
        heartbeatInterval: this.#options.probeTimeout,
        onEvent: (frame) => this.#onEvent(frame),
        onClose: () => {
          if (!this.#closing.signal.aborted && this.#connection === connection) void this.#reconnect();
        },
      },
      this.#closing.signal,
    );
    // close() during a (re)connect must not leave a connection behind that finishes its handshake later.
    const abort = () => connection.close();
    this.#closing.signal.addEventListener('abort', abort, { once: true });
    try {
      await this.#handshake(connection);
      if (this.#closing.signal.aborted) throw new BackendConnectionError('the proxy is closing');
      return connection;
    } catch (error) {
      connection.close();
      throw error;
    } finally {
      this.#closing.signal.removeEventListener('abort', abort);
    }
  }

  async #request(connection: BackendConnection, opcode: number, body: Buffer): Promise<Frame> {
    const frame = await connection.request(opcode, body, { timeout: this.#options.requestTimeout });
    if (frame.opcode === Opcode.ERROR) {
      const error = decodeError(frame.body);
      throw new BackendRefusedError(`${error.message} (error 0x${error.code.toString(16)})`);
    }
    return frame;
  }

  async #handshake(connection: BackendConnection): Promise<void> {
    const supported = decodeSupported((await this.#request(connection, Opcode.OPTIONS, Buffer.alloc(0))).body);
    const cqlVersion = supported.options.get('CQL_VERSION')?.[0] ?? '3.0.0';
    const ready = await this.#request(
      connection,
      Opcode.STARTUP,
      encodeStartup({
        options: new Map([
          ['CQL_VERSION', cqlVersion],
          ['DRIVER_NAME', CONTROL_DRIVER_NAME],
        ]),
      }),
    );
    if (ready.opcode === Opcode.AUTHENTICATE) {
      const { authenticator } = decodeAuthenticate(ready.body);
      const { username, password } = this.#options;
      if (username === undefined || password === undefined) {
        throw new BackendRefusedError(
          `the backend requires authentication (${authenticator}); set proxy.backend.username and proxy.backend.password for the proxy's own control connection`,
        );
      }
      const token = Buffer.concat([Buffer.from([0]), Buffer.from(username), Buffer.from([0]), Buffer.from(password)]);
      const reply = await this.#request(connection, Opcode.AUTH_RESPONSE, encodeAuthToken({ token }));
      if (reply.opcode !== Opcode.AUTH_SUCCESS) throw new BackendRefusedError(`authentication did not complete (opcode ${reply.opcode})`);
    }
    (connection as { compression?: readonly string[] }).compression = supported.options.get('COMPRESSION') ?? [];
    await this.#request(connection, Opcode.REGISTER, encodeRegister({ eventTypes: ['TOPOLOGY_CHANGE', 'STATUS_CHANGE', 'SCHEMA_CHANGE'] }));
  }

  async #select(connection: BackendConnection, query: string): Promise<BackendTable> {
    const frame = await this.#request(
      connection,
      Opcode.QUERY,
      encodeQuery({ query, parameters: { consistency: Consistency.ONE } }, connection.version),
    );
    const result = decodeResult(frame.body, connection.version);
    if (result.kind !== 'Rows' || !result.metadata.columns) throw new Error(`unexpected answer to ${query}`);
    const columns = result.metadata.columns;
    const rows = result.rows.map((row) => Object.fromEntries(columns.map((c, i) => [c.name, decodeCell(c.type, row[i] ?? null)])));
    return { columns, rows };
  }

  async #read(connection: BackendConnection): Promise<BackendView> {
    const local = await this.#select(connection, "SELECT * FROM system.local WHERE key='local'");
    const peers = await this.#select(connection, 'SELECT * FROM system.peers');
    let peersV2: BackendTable | undefined;
    try {
      peersV2 = await this.#select(connection, 'SELECT * FROM system.peers_v2');
    } catch (error) {
      if (!(error instanceof BackendRefusedError)) throw error;
    }
    const row = local.rows[0] ?? {};
    const localDataCenter = this.#options.localDataCenter ?? num(row.data_center) ?? 'datacenter1';
    const contact: BackendNode = { ...connection.address, dataCenter: num(row.data_center), hostId: num(row.host_id) };
    const all: BackendNode[] = (peersV2 ?? peers).rows.map((p) => ({
      host: num(p.native_address ?? p.rpc_address ?? p.peer) ?? '',
      port: Number(p.native_port ?? connection.address.port),
      dataCenter: num(p.data_center),
      hostId: num(p.host_id),
    }));
    const routing: RoutingTopology = {
      ring: ringNodes([{ ...connection.address, row }, ...all.map((n, i) => ({ ...n, row: (peersV2 ?? peers).rows[i]! }))]),
      replication: await this.#replication(connection),
      localDataCenter,
    };
    const others = all
      .filter((n) => n.host !== '' && n.dataCenter === localDataCenter)
      .sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : a.port - b.port));
    return {
      version: connection.version,
      clusterName: num(row.cluster_name) ?? 'Test Cluster',
      releaseVersion: num(row.release_version) ?? '',
      cqlVersion: num(row.cql_version) ?? '3.4.7',
      partitioner: num(row.partitioner) ?? '',
      schemaVersion: num(row.schema_version),
      localDataCenter,
      dataCenters: [...new Set([localDataCenter, ...all.map((n) => n.dataCenter).filter((dc): dc is string => dc !== undefined)])],
      compression: (connection as { compression?: readonly string[] }).compression ?? [],
      local,
      peersColumns: peers.columns,
      peersV2Columns: peersV2?.columns,
      nodes: [contact, ...others.filter((n) => !(n.host === contact.host && n.port === contact.port))],
      allNodes: [contact, ...all],
      routing,
    };
  }

  /** Each keyspace's replication; none when the schema cannot be read (requests then go the ordinary way). */
  async #replication(connection: BackendConnection): Promise<Map<string, Replication>> {
    const replication = new Map<string, Replication>();
    try {
      const keyspaces = await this.#select(connection, 'SELECT keyspace_name, replication FROM system_schema.keyspaces');
      for (const row of keyspaces.rows) {
        const options = row.replication;
        const parsed = options instanceof Map ? parseReplication(new Map([...options].map(([k, v]) => [String(k), String(v)]))) : undefined;
        if (parsed) replication.set(String(row.keyspace_name), parsed);
      }
    } catch (error) {
      if (!(error instanceof BackendRefusedError)) throw error;
    }
    return replication;
  }

  #onEvent(frame: Frame): void {
    let event;
    try {
      event = decodeEvent(frame.body);
    } catch {
      return;
    }
    if (event.type === 'SCHEMA_CHANGE') {
      for (const listener of this.#schemaListeners) listener(event, frame);
    }
    // Any backend event may change what we show (schema_version, the node list): refresh, debounced.
    clearTimeout(this.#refreshTimer);
    this.#refreshTimer = setTimeout(() => void this.refresh(), event.type === 'SCHEMA_CHANGE' ? 200 : 1000);
    this.#refreshTimer.unref();
  }

  /** Re-reads identity and topology; keeps the last view when the backend cannot answer. */
  async refresh(): Promise<void> {
    const connection = this.#connection;
    if (!connection || connection.closed) return;
    try {
      this.#view = await this.#read(connection);
      this.health.track(this.#view.nodes);
    } catch {
      // The next event or reconnect refreshes again; a stale view is better than none.
    }
  }

  async #reconnect(): Promise<void> {
    this.#reconnecting ??= (async () => {
      for (let attempt = 0; !this.#closing.signal.aborted; attempt++) {
        try {
          await this.#connect();
          return;
        } catch {
          await sleep(backoffDelay(attempt, 500, 10_000), this.#closing.signal).catch(() => undefined);
        }
      }
    })().finally(() => {
      this.#reconnecting = undefined;
    });
    return this.#reconnecting;
  }

  /**
   * After a DDL answered on `coordinator`: waits (at most `timeout` ms) until the nodes agree on the
   * coordinator's schema version, then refreshes the view (its schema_version is what clients see).
   * Resolves whether they agreed; never rejects.
   */
  async agreeOnSchema(coordinator: BackendConnection, body: (frame: Frame) => Buffer, timeout: number): Promise<boolean> {
    const deadline = Date.now() + timeout;
    try {
      const target = await coordinatorSchemaVersion(coordinator, body, timeout);
      if (target === undefined) return false;
      const agreed = await this.schemaAgreement.wait(target, Math.max(0, deadline - Date.now()));
      if (agreed) await this.refresh();
      return agreed;
    } catch {
      return false;
    }
  }

  async #schemaVersions(): Promise<SchemaVersions> {
    const connection = this.#connection;
    if (!connection || connection.closed) throw new BackendConnectionError('the control connection is down');
    const local = await this.#select(connection, "SELECT schema_version FROM system.local WHERE key='local'");
    const peers = await this.#select(connection, 'SELECT peer, rpc_address, schema_version FROM system.peers');
    return {
      local: num(local.rows[0]?.schema_version),
      peers: new Map(peers.rows.map((p) => [num(p.rpc_address ?? p.peer) ?? '', num(p.schema_version)])),
    };
  }

  close(): void {
    this.#closing.abort();
    this.health.close();
    clearTimeout(this.#refreshTimer);
    this.#connection?.close();
  }
}
