import { BufferBudget } from '../../src/proxy/buffer-budget.js';
import { createServer, type Server } from 'node:net';
import { ProxyMetrics } from '../../src/http/metrics.js';
import { frameCompression } from '../../src/protocol/compression.js';
import { Opcode, type Frame } from '../../src/protocol/frame.js';
import type { BackendConnection } from '../../src/proxy/backend-connection.js';
import type { BackendView } from '../../src/proxy/backend-cluster.js';
import { ClientConnection } from '../../src/proxy/client-connection.js';
import { adoptIntoSlabs } from '../../src/proxy/slab-reads.js';
import type { ProxyContext } from '../../src/proxy/context.js';
import { PreparedCache } from '../../src/proxy/prepared-cache.js';
import { createSystemTableIntercept } from '../../src/proxy/system-intercept.js';
import { deriveMembership } from '../../src/virtual/membership.js';
import { PARTITIONER } from '../../src/virtual/system-rows.js';
import { advanceView } from '../../src/virtual/view.js';
import { endpoint, heartbeat } from '../virtual/fixtures.js';
import { proxyConfig } from './harness.js';

/** The real node the scripted backend pretends to be: its identity must never reach a client. */
export const REAL_NODE = { address: '10.9.8.7', hostId: '99999999-9999-4999-8999-999999999999', token: '-4242424242' };

/** A request the client connection sent on to the backend. */
export interface Forwarded {
  readonly opcode: number;
  readonly flags: number;
  readonly body: Buffer;
}

/** What the scripted backend answers a forwarded request with: an opcode and a body. */
export type Script = (request: Forwarded) => Answer | Error | Promise<Answer | Error>;
type Answer = { opcode: number; body?: Buffer; flags?: number };

export const backendView = (): BackendView => ({
  version: 4,
  clusterName: 'Real Cluster',
  releaseVersion: '5.0.8',
  cqlVersion: '3.4.7',
  partitioner: PARTITIONER,
  schemaVersion: undefined,
  localDataCenter: 'datacenter1',
  dataCenters: ['datacenter1'],
  compression: ['lz4', 'snappy'],
  local: {
    columns: [],
    rows: [
      {
        key: 'local',
        cluster_name: 'Real Cluster',
        release_version: '5.0.8',
        cql_version: '3.4.7',
        native_protocol_version: '5',
        data_center: 'datacenter1',
        rack: 'rack1',
        partitioner: PARTITIONER,
        broadcast_address: REAL_NODE.address,
        listen_address: REAL_NODE.address,
        rpc_address: REAL_NODE.address,
        host_id: REAL_NODE.hostId,
        tokens: [REAL_NODE.token],
      },
    ],
  },
  peersColumns: [],
  peersV2Columns: undefined,
  nodes: [],
  allNodes: [],
  routing: { ring: [], replication: new Map(), localDataCenter: 'datacenter1' },
});

/**
 * One proxy client connection (the real ClientConnection and system-table intercept) in front of a
 * scripted backend connection, on a loopback listener: what a client sees and what reaches the
 * backend, without a Cassandra. A two-member virtual cluster (proxy-0 = self, proxy-1).
 */
export async function scriptedProxy(script: Script): Promise<{
  address: string;
  forwarded: Forwarded[];
  metrics: ProxyMetrics;
  context: ProxyContext;
  /** The proxy's live client connections, as its drain sees them. */
  clients: ReadonlySet<ClientConnection>;
  close(): Promise<void>;
}> {
  const config = proxyConfig({ backend: { contactPoints: ['127.0.0.1:9042'] }, limits: { preparedCacheSize: 100 } }, 'proxy-0');
  const metrics = new ProxyMetrics();
  const view = advanceView(
    undefined,
    deriveMembership(
      {
        self: { id: 'proxy-0', nativePort: 9042 },
        endpoints: [endpoint('proxy-0', '127.0.0.50'), endpoint('proxy-1', '127.0.0.51')],
        heartbeats: [heartbeat('proxy-0'), heartbeat('proxy-1')],
      },
      { clusterName: 'Real Cluster', defaultDc: 'datacenter1' },
    ),
  );
  const backend = backendView();
  const forwarded: Forwarded[] = [];
  const connection = {
    closed: false,
    congested: false,
    inFlight: 0,
    onDrain: () => undefined,
    useSegments: () => undefined,
    close: () => undefined,
    send(opcode: number, body: Buffer, flags: number, _timeout: number | undefined, handler: (e: Error | undefined, f?: Frame) => void) {
      const request = { opcode, flags, body: Buffer.from(body) };
      forwarded.push(request);
      // A promise holds the answer back (a request in flight) until the test settles it.
      void Promise.resolve(script(request)).then((answer) =>
        setImmediate(() => {
          if (answer instanceof Error) return handler(answer);
          handler(undefined, {
            version: 4,
            response: true,
            stream: 0,
            flags: answer.flags ?? 0,
            opcode: answer.opcode,
            body: answer.body ?? Buffer.alloc(0),
          });
        }),
      );
    },
    request: () => Promise.reject(new Error('not scripted')),
  } as unknown as BackendConnection;
  const clients = new Set<ClientConnection>();
  const context: ProxyContext = {
    config,
    metrics,
    intercept: createSystemTableIntercept({ config, backend: () => backend, view: () => view, gossipGeneration: 1_700_000_000 }),
    prepared: new PreparedCache(100),
    supportedOptions: () => new Map([['CQL_VERSION', ['3.4.7']]]),
    // As the proxy's own: the compressions the backend's SUPPORTED lists.
    codec: (name) => (backend.compression.includes(name) ? frameCompression(name) : undefined),
    connectBackend: () => Promise.resolve(connection),
    // One scripted node: nothing to route to.
    router: undefined,
    connectNode: () => Promise.reject(new Error('not scripted')),
    draining: () => false,
    eventsSince: () => [],
    forget: (client) => clients.delete(client),
    established: () => undefined,
    awaitSchemaAgreement: () => Promise.resolve(),
    buffers: new BufferBudget(config.connections.maxBufferedBytes),
    backendFootprint: () => ({
      addresses: new Set([REAL_NODE.address]),
      hostIds: new Set([REAL_NODE.hostId]),
      tokens: new Set([REAL_NODE.token]),
    }),
  };
  let next = 0;
  // Sockets read as the proxy's own listener reads them (into slabs), where this Node allows it.
  const server: Server = createServer((accepted) => {
    const adopted = adoptIntoSlabs(accepted);
    clients.add(new ClientConnection(++next, adopted?.socket ?? accepted, context, adopted?.reads));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    address: `127.0.0.1:${port}`,
    forwarded,
    metrics,
    context,
    clients,
    close: async () => {
      for (const client of clients) client.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A backend without authentication: READY to STARTUP, an empty RESULT Void to everything else. */
export const openBackend: Script = (request) =>
  request.opcode === Opcode.STARTUP ? { opcode: Opcode.READY } : { opcode: Opcode.RESULT, body: Buffer.from([0, 0, 0, 1]) };
