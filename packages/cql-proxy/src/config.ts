import { hostname } from 'node:os';
import { ConfigError, type ConfigSource } from '@muster/core';
import { s, validate, type Infer } from '@muster/core/adapter';

/** A TCP port, 1–65535, as text. */
const PORT = '(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d{2}|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3})';
/** host, host:port, [IPv6]:port or a bare IPv6 address (two colons at least; the default port). */
const hostPort = s.string({
  pattern: new RegExp(
    `^(?:(?:\\[[0-9a-fA-F:.]+\\]|[^\\s:\\[\\]]+)(?::${PORT})?|(?=[^:]*:[^:]*:)[0-9a-fA-F:]+(?:\\d{1,3}(?:\\.\\d{1,3}){3})?)$`,
  ),
  hint: 'host, host:port or [IPv6 address]:port with a port of 1-65535',
});

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
    password: s.optional(s.secret(s.string())),
    connectTimeout: s.withDefault(s.duration({ min: 1 }), 5000),
    requestTimeout: s.withDefault(s.duration({ min: 1 }), 12_000),
    /** Idle backend connections send OPTIONS this often. */
    heartbeatInterval: s.withDefault(s.duration({ min: 100 }), 30_000),
    /** Every backend node is sent OPTIONS this often; one that does not answer within probeTimeout is avoided. */
    probeInterval: s.withDefault(s.duration({ min: 100 }), 1000),
    probeTimeout: s.withDefault(s.duration({ min: 100 }), 2000),
    /** A DDL's answer waits at most this long for the backend nodes to agree on the schema (0: no wait). */
    schemaAgreementTimeout: s.withDefault(s.duration({ min: 0 }), 10_000),
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
      /** Largest request frame a client may send: Cassandra's own native_transport_max_frame_size. */
      maxFrameBytes: s.withDefault(s.integer({ min: 1024 }), 16 * 1024 * 1024),
      preparedCacheSize: s.withDefault(s.integer({ min: 1 }), 10_000),
    }),
    { maxClientConnections: 1024, maxInFlightPerConnection: 2048, maxFrameBytes: 16 * 1024 * 1024, preparedCacheSize: 10_000 },
  ),
  /**
   * How client sockets are admitted and how long they may hold a slot: silent, slow or misbehaving
   * sockets from one address must never lock out clients from another.
   */
  connections: s.withDefault(
    s.object({
      /** From accept to a finished handshake (TLS, STARTUP, authentication); then the socket is destroyed. */
      handshakeTimeout: s.withDefault(s.duration({ min: 1 }), 10_000),
      /** The TLS handshake alone (with proxy.tls). */
      tlsHandshakeTimeout: s.withDefault(s.duration({ min: 1 }), 5000),
      /** An established connection with no traffic either way for this long is closed; 0 turns it off. */
      idleTimeout: s.withDefault(s.duration(), 0),
      /** Sockets still in their handshake, all addresses together (they count against maxClientConnections too). */
      maxHandshaking: s.withDefault(s.integer({ min: 1 }), 256),
      /** Open sockets from one client address, handshaking or established. */
      maxPerAddress: s.withDefault(s.integer({ min: 1 }), 256),
      /** Sockets in their handshake from one client address. */
      maxHandshakingPerAddress: s.withDefault(s.integer({ min: 1 }), 32),
      /** After an error answer or a refusal, the socket is destroyed this long after end() if the client keeps it open. */
      closeGrace: s.withDefault(s.duration(), 1000),
      /** Bytes of partly received requests buffered across all client connections. */
      maxBufferedBytes: s.withDefault(s.integer({ min: 1024 }), 256 * 1024 * 1024),
    }),
    {
      handshakeTimeout: 10_000,
      tlsHandshakeTimeout: 5000,
      idleTimeout: 0,
      maxHandshaking: 256,
      maxPerAddress: 256,
      maxHandshakingPerAddress: 32,
      closeGrace: 1000,
      maxBufferedBytes: 256 * 1024 * 1024,
    },
  ),
  /**
   * Where forwarded requests go. With `replicas` (the default), an EXECUTE of a prepared statement
   * whose partition key is bound (protocol v4+) goes to a replica of its partition in the local
   * data center, over a connection of the client's own to that node; everything else goes over
   * the client's first connection. false: every request of a client goes to one node.
   */
  routing: s.withDefault(s.object({ replicas: s.withDefault(s.boolean(), true) }), { replicas: true }),
  /** Serve system.peers_v2; false answers "unconfigured table" as pre-4.0 servers do. */
  peersV2: s.withDefault(s.boolean(), true),
  http: s.withDefault(
    s.object({
      host: s.withDefault(s.string({ minLength: 1 }), '127.0.0.1'),
      port: s.withDefault(s.integer({ min: 0, max: 65535 }), 9100),
    }),
    { host: '127.0.0.1', port: 9100 },
  ),
  /**
   * Draining on SIGTERM (see the README's "Drain"): peers announce this instance DOWN and then
   * remove it, drivers get `grace` to close their connections themselves, then each remaining one
   * is half-closed after its last answer; at `drainTimeout` the rest is closed.
   */
  shutdown: s.withDefault(
    s.object({
      /** How long drivers get to leave on their own; it must cover peers' notice (probe interval + 3 × debounce) and the drivers' refresh. */
      grace: s.withDefault(s.duration(), 10_000),
      drainTimeout: s.withDefault(s.duration(), 30_000),
    }),
    { grace: 10_000, drainTimeout: 30_000 },
  ),
  /**
   * Liveness of peers when membership cannot tell it (static members without a HeartbeatStore
   * shared across processes): each peer's readiness endpoint (when its member entry has
   * `ports: { http: N }`) or native port is probed. `auto` probes exactly then.
   */
  peerProbe: s.withDefault(
    s.object({
      mode: s.withDefault(s.literal('auto', 'on', 'off'), 'auto'),
      interval: s.withDefault(s.duration({ min: 50 }), 1000),
      timeout: s.withDefault(s.duration({ min: 10 }), 1000),
    }),
    { mode: 'auto', interval: 1000, timeout: 1000 },
  ),
  log: s.withDefault(s.object({ level: s.withDefault(s.literal('trace', 'debug', 'info', 'warn', 'error', 'silent'), 'info') }), {
    level: 'info',
  }),
});

export type ProxyConfig = Infer<typeof proxySchema> & { instanceId: string };

/** Environment variables that set one `proxy:` value each: MUSTER_PROXY_LISTEN_PORT=9043. */
export const ENV_PREFIX = 'MUSTER_PROXY_';

interface JsonSchemaNode {
  type?: string;
  properties?: Record<string, JsonSchemaNode>;
  items?: JsonSchemaNode;
}

const envName = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** The MUSTER_PROXY_* variable that sets the `proxy:` value at `path`. */
export const envVariable = (path: readonly string[]): string => ENV_PREFIX + path.map(envName).join('_');

/**
 * The `proxy:` values set by MUSTER_PROXY_* variables: the rest of the name is the path in upper
 * snake case (BACKEND_CONTACT_POINTS → backend.contactPoints). Values are typed by the schema:
 * numbers, true/false, comma-separated lists; an unknown name or a value of the wrong type is an
 * error naming the variable.
 */
export function envOverrides(env: NodeJS.ProcessEnv): { variable: string; path: string[]; value: unknown }[] {
  const out: { variable: string; path: string[]; value: unknown }[] = [];
  let root: JsonSchemaNode | undefined; // built only when a variable asks for it
  for (const [variable, raw] of Object.entries(env)) {
    if (!variable.startsWith(ENV_PREFIX) || raw === undefined) continue;
    root ??= proxySchema.jsonSchema() as JsonSchemaNode;
    let rest = variable.slice(ENV_PREFIX.length);
    let node = root;
    const path: string[] = [];
    while (rest) {
      const key = Object.keys(node.properties ?? {}).find((k) => rest === envName(k) || rest.startsWith(`${envName(k)}_`));
      if (key === undefined)
        throw new ConfigError(
          '',
          `no proxy setting is called that (after ${ENV_PREFIX}, the path in upper snake case, e.g. ${ENV_PREFIX}LISTEN_PORT)`,
          { setting: variable },
        );
      path.push(key);
      node = node.properties![key]!;
      rest = rest.slice(envName(key).length + 1);
    }
    out.push({ variable, path, value: envValue(variable, raw, node) });
  }
  return out;
}

function envValue(variable: string, raw: string, node: JsonSchemaNode): unknown {
  const wrong = (what: string) => new ConfigError('', `expected ${what}, got ${JSON.stringify(raw)}`, { setting: variable });
  switch (node.type) {
    case 'integer':
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) throw wrong('a number');
      return n;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') throw wrong('true or false');
      return raw === 'true';
    case 'array':
      return raw
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
    case 'object':
      throw wrong(
        `one of its settings (${Object.keys(node.properties ?? {})
          .map((k) => `${variable}_${envName(k)}`)
          .join(', ')})`,
      );
    default:
      return raw;
  }
}

/**
 * Reads the `proxy:` section. Precedence, highest first: command-line flags (applied by the CLI),
 * MUSTER_PROXY_* environment variables, then the file (whose values may also read the environment
 * with ${VAR} / ${VAR:-default}), then the defaults here.
 */
export function readProxyConfig(source: ConfigSource, selfId: string | undefined, env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  const overrides = envOverrides(env);
  if (source.data.proxy === undefined && overrides.length === 0) {
    throw source.error(['proxy'], 'is required: the proxy section names at least backend.contactPoints');
  }
  let config: Infer<typeof proxySchema>;
  if (overrides.length === 0) config = source.parse(['proxy'], proxySchema);
  else {
    const data = structuredClone((source.data.proxy ?? {}) as Record<string, unknown>);
    for (const { path, value } of overrides) {
      let at = data;
      for (const key of path.slice(0, -1)) {
        if (typeof at[key] !== 'object' || at[key] === null) at[key] = {};
        at = at[key] as Record<string, unknown>;
      }
      at[path.at(-1)!] = value;
    }
    const result = validate(proxySchema, data, ['proxy']);
    if ('issues' in result) {
      const first = result.issues[0]!;
      const from = overrides.find((o) => ['proxy', ...o.path].join('.') === first.path.join('.'));
      if (from) throw new ConfigError('', first.message, { setting: from.variable });
      throw source.issuesError(result.issues);
    }
    config = result.value;
  }
  return { ...config, instanceId: config.instanceId ?? selfId ?? hostname() };
}

export const proxyJsonSchema = () => proxySchema.jsonSchema();
