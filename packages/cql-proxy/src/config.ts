import { hostname } from 'node:os';
import { s, type ConfigSource, type Infer } from '@muster/core';

const hostPort = s.string({ pattern: /^(\[[0-9a-fA-F:.]+\]|[^\s:]+)(:\d{1,5})?$/, hint: 'host or host:port' });

export const proxySchema = s.object({
  /** This instance's identity in the virtual cluster; stable across restarts for a stable host_id. */
  instanceId: s.optional(s.string({ minLength: 1 })),
  /** The Discovery service the proxy instances belong to. */
  service: s.withDefault(s.string({ minLength: 1 }), 'muster-cql-proxy'),
  listen: s.withDefault(
    s.object({
      host: s.withDefault(s.string({ minLength: 1 }), '127.0.0.1'),
      port: s.withDefault(s.integer({ min: 0, max: 65535 }), 9042),
    }),
    { host: '127.0.0.1', port: 9042 },
  ),
  /** TLS towards clients: the listener then accepts TLS only. */
  tls: s.optional(
    s.object({
      certFile: s.string({ minLength: 1 }),
      keyFile: s.string({ minLength: 1 }),
      /** Client certificates must be signed by this CA (with requireClientCert). */
      caFile: s.optional(s.string({ minLength: 1 })),
      requireClientCert: s.withDefault(s.boolean(), false),
    }),
  ),
  /** What drivers dial for this instance; default: the local address of each accepted socket. */
  advertise: s.optional(s.object({ address: s.string({ minLength: 1 }), port: s.optional(s.integer({ min: 1, max: 65535 })) })),
  /** Overrides the cluster name the backend reports. */
  clusterName: s.optional(s.string({ minLength: 1 })),
  /** data_center / rack shown for this instance (default: the backend's local DC, rack1). */
  dataCenter: s.optional(s.string({ minLength: 1 })),
  rack: s.withDefault(s.string({ minLength: 1 }), 'rack1'),
  backend: s.object({
    contactPoints: s.array(hostPort, { minItems: 1 }),
    localDataCenter: s.optional(s.string({ minLength: 1 })),
    username: s.optional(s.string()),
    password: s.optional(s.string()),
    connectTimeout: s.withDefault(s.duration({ min: 1 }), 5000),
    requestTimeout: s.withDefault(s.duration({ min: 1 }), 12_000),
    /** Idle backend connections send OPTIONS this often. */
    heartbeatInterval: s.withDefault(s.duration({ min: 100 }), 30_000),
    /** TLS towards the backend nodes (control and client connections); the chain is always verified. */
    tls: s.optional(
      s.object({
        /** CA(s) that sign the nodes' certificates; default: Node.js's bundled public CAs. */
        caFile: s.optional(s.string({ minLength: 1 })),
        /** A client certificate and key, for nodes with require_client_auth. */
        certFile: s.optional(s.string({ minLength: 1 })),
        keyFile: s.optional(s.string({ minLength: 1 })),
        /** The name each node's certificate must carry (and the SNI); default: the node's address. */
        serverName: s.optional(s.string({ minLength: 1 })),
        /** false: accept any name on a certificate the CA signed (not recommended). */
        verifyHostname: s.withDefault(s.boolean(), true),
      }),
    ),
  }),
  heartbeat: s.withDefault(
    s.object({
      interval: s.withDefault(s.duration({ min: 10 }), 2000),
      ttl: s.withDefault(s.duration({ min: 100 }), 10_000),
      group: s.optional(s.string({ minLength: 1 })),
    }),
    { interval: 2000, ttl: 10_000 },
  ),
  tokens: s.withDefault(
    s.object({
      mode: s.withDefault(s.literal('stable', 'zdm'), 'stable'),
      perInstance: s.withDefault(s.integer({ min: 1, max: 256 }), 8),
    }),
    { mode: 'stable', perInstance: 8 },
  ),
  events: s.withDefault(
    s.object({
      /** Membership changes are held this long so flaps produce no events. */
      debounce: s.withDefault(s.duration(), 500),
      maxDelay: s.withDefault(s.duration(), 5000),
      /** Re-derive membership this often, so a missed watch event heals. */
      reconcile: s.withDefault(s.duration({ min: 100 }), 30_000),
      /** Events queued for one client before it is dropped as too slow. */
      maxQueued: s.withDefault(s.integer({ min: 1 }), 1000),
    }),
    { debounce: 500, maxDelay: 5000, reconcile: 30_000, maxQueued: 1000 },
  ),
  limits: s.withDefault(
    s.object({
      maxClientConnections: s.withDefault(s.integer({ min: 1 }), 1024),
      maxInFlightPerConnection: s.withDefault(s.integer({ min: 1, max: 32768 }), 2048),
      maxFrameBytes: s.withDefault(s.integer({ min: 1024 }), 256 * 1024 * 1024),
      preparedCacheSize: s.withDefault(s.integer({ min: 1 }), 10_000),
    }),
    { maxClientConnections: 1024, maxInFlightPerConnection: 2048, maxFrameBytes: 256 * 1024 * 1024, preparedCacheSize: 10_000 },
  ),
  /** Serve system.peers_v2; false answers "unconfigured table" as pre-4.0 servers do. */
  peersV2: s.withDefault(s.boolean(), true),
  http: s.withDefault(
    s.object({
      host: s.withDefault(s.string({ minLength: 1 }), '127.0.0.1'),
      port: s.withDefault(s.integer({ min: 0, max: 65535 }), 9100),
    }),
    { host: '127.0.0.1', port: 9100 },
  ),
  shutdown: s.withDefault(s.object({ drainTimeout: s.withDefault(s.duration(), 30_000) }), { drainTimeout: 30_000 }),
  log: s.withDefault(s.object({ level: s.withDefault(s.literal('trace', 'debug', 'info', 'warn', 'error', 'silent'), 'info') }), {
    level: 'info',
  }),
});

export type ProxyConfig = Infer<typeof proxySchema> & { instanceId: string };

/**
 * Reads the `proxy:` section. Precedence, highest first: command-line flags (applied by the CLI),
 * then the file (whose values may read the environment with ${VAR} / ${VAR:-default}), then the
 * defaults here.
 */
export function readProxyConfig(source: ConfigSource, selfId: string | undefined): ProxyConfig {
  if (source.data.proxy === undefined) throw source.error(['proxy'], 'is required: the proxy section names at least backend.contactPoints');
  const config = source.parse(['proxy'], proxySchema);
  return { ...config, instanceId: config.instanceId ?? selfId ?? hostname() };
}

/** The effective config for logs and --check, with secrets replaced. */
export function redact(value: unknown, key = ''): unknown {
  if (/password|token|secret/i.test(key) && value !== undefined) return '<redacted>';
  if (Array.isArray(value)) return value.map((v) => redact(v));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  return value;
}

export const proxyJsonSchema = () => proxySchema.jsonSchema();
