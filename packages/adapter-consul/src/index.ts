import { InvalidArgumentError } from '@muster/core';
import { createHeartbeatStore, createLock, defineAdapter, s, type AdapterContext, type Infer } from '@muster/core/adapter';
import { agentUrl, ConsulClient, connectionFromEnv, readPem, type ConsulTls } from './client.js';
import { consulDiscovery } from './discovery.js';
import { ConsulHeartbeatBackend } from './heartbeat.js';
import { ConsulLockBackend } from './lock.js';

/** See the maxPayloadBytes option. */
const maxPayloadBytes = 256 * 1024;

const optionsSchema = s.object({
  /** `host:port` or an http(s) URL of the local agent's HTTP API; else CONSUL_HTTP_ADDR, else 127.0.0.1:8500. */
  address: s.optional(s.string({ minLength: 1 })),
  /** ACL token; else CONSUL_HTTP_TOKEN. */
  token: s.optional(s.secret(s.string())),
  datacenter: s.optional(s.string({ minLength: 1 })),
  /** Consul Enterprise only. */
  namespace: s.optional(s.string({ minLength: 1 })),
  partition: s.optional(s.string({ minLength: 1 })),
  /** PEM files, relative to the config file; else CONSUL_CACERT, CONSUL_CLIENT_CERT, CONSUL_CLIENT_KEY. */
  tls: s.optional(
    s.object({
      caFile: s.optional(s.string({ minLength: 1 })),
      certFile: s.optional(s.string({ minLength: 1 })),
      keyFile: s.optional(s.string({ minLength: 1 })),
      serverName: s.optional(s.string({ minLength: 1 })),
    }),
  ),
  requestTimeout: s.withDefault(s.duration({ min: 100 }), 10_000),
  /** Where Muster's keys live in KV: `<prefix>locks/…`, `<prefix>heartbeats/…`. */
  keyPrefix: s.withDefault(
    s.string({ minLength: 1, pattern: /^[^/].*\/$/, hint: 'a KV prefix ending in / (not starting with one)' }),
    'muster/',
  ),
  /** Default lease ttl (lock) and beat ttl (heartbeat). */
  ttl: s.optional(s.duration({ min: 1 })),
  /** The servers' session_ttl_min; shorter ttls are refused here with a clear error. */
  minSessionTtl: s.withDefault(s.duration({ min: 1 }), 10_000),
  holder: s.optional(s.string({ minLength: 1 })),
  /** What Consul does with a lock key when its holder's session dies. */
  sessionBehavior: s.withDefault(s.literal('release', 'delete'), 'release'),
  /** Consul's lock-delay after a holder dies (adds to failover; see lock.ts). */
  lockDelay: s.withDefault(s.duration(), 15_000),
  /**
   * Largest heartbeat payload (bytes of JSON). A beat is one transaction whose body carries the
   * payload base64-encoded (4/3 of it) inside the stored record, and Consul refuses a body over its
   * txn_max_req_len (512 KiB): payloads from about 380 KB got HTTP 413. 256 KiB leaves the rest of
   * the body ample room for the key, member id, group and incarnation.
   */
  maxPayloadBytes: s.withDefault(s.integer({ min: 1, max: maxPayloadBytes }), 4096),
  /** A member that stopped beating is deleted after this many ttls (stale until then). */
  removeAfterTtls: s.withDefault(s.integer({ min: 2 }), 6),
  health: s.withDefault(s.literal('all', 'passing'), 'all'),
  readyOnWarning: s.withDefault(s.boolean(), false),
  watchWait: s.withDefault(s.duration({ min: 1000 }), 60_000),
  minWatchInterval: s.withDefault(s.duration(), 100),
  checkTtl: s.withDefault(s.duration({ min: 1000 }), 10_000),
  deregisterCriticalAfter: s.withDefault(s.duration({ min: 60_000 }), 60_000),
});

export type ConsulOptions = Infer<typeof optionsSchema>;

/** TLS towards the agent from the options, else CONSUL_CACERT / CONSUL_CLIENT_*; the PEM files are read here. */
function agentTls(options: ConsulOptions, context: AdapterContext, env: ReturnType<typeof connectionFromEnv>): ConsulTls | undefined {
  const where = (key: string) => context.describe(['tls', key]);
  const caFile = options.tls?.caFile ?? env.caFile;
  const certFile = options.tls?.certFile ?? env.certFile;
  const keyFile = options.tls?.keyFile ?? env.keyFile;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new InvalidArgumentError(`${context.describe(['tls'])}: a client certificate needs both certFile and keyFile`);
  }
  if (!options.tls && !caFile && !certFile) return undefined;
  return {
    ...(caFile ? { ca: readPem(caFile, context.configDir, where('caFile')) } : {}),
    ...(certFile ? { cert: readPem(certFile, context.configDir, where('certFile')) } : {}),
    ...(keyFile ? { key: readPem(keyFile, context.configDir, where('keyFile')) } : {}),
    ...(options.tls?.serverName ? { serverName: options.tls.serverName } : {}),
  };
}

function connect(options: ConsulOptions, context: AdapterContext): ConsulClient {
  const env = connectionFromEnv();
  const tls = agentTls(options, context, env);
  const token = options.token ?? env.token;
  const namespace = options.namespace ?? env.namespace;
  const partition = options.partition ?? env.partition;
  return new ConsulClient({
    address: options.address ?? env.address ?? '127.0.0.1:8500',
    ...(token ? { token } : {}),
    ...(options.datacenter ? { datacenter: options.datacenter } : {}),
    ...(namespace ? { namespace } : {}),
    ...(partition ? { partition } : {}),
    ...(tls ? { tls } : {}),
    requestTimeout: options.requestTimeout,
  });
}

/**
 * Consul: discovery from the health API with self-registration (TTL check), locks on sessions and
 * KV acquire with stored fencing tokens (core's nextFencingToken), heartbeats as session-bound KV keys.
 * Each port gets its own connection to the local agent and closes it on close().
 */
export default defineAdapter({
  name: 'consul',
  core: '^0.1.0',
  options: optionsSchema,
  // What connecting would refuse, found without a request (for --check, and before each port).
  check(_port, options, context) {
    const env = connectionFromEnv();
    const address = options.address ?? env.address;
    // The scheme (TLS or not) does not change whether the address is readable.
    if (address !== undefined) agentUrl(address, false, options.address !== undefined ? context.describe(['address']) : 'CONSUL_HTTP_ADDR');
    agentTls(options, context, env);
  },
  discovery(options, context) {
    return consulDiscovery(connect(options, context), {
      health: options.health,
      readyOnWarning: options.readyOnWarning,
      watchWait: options.watchWait,
      minWatchInterval: options.minWatchInterval,
      checkTtl: options.checkTtl,
      deregisterCriticalAfter: options.deregisterCriticalAfter,
    });
  },
  lock(options, context) {
    const backend = new ConsulLockBackend(connect(options, context), {
      keyPrefix: options.keyPrefix,
      behavior: options.sessionBehavior,
      lockDelay: options.lockDelay,
      clock: context.clock,
      ...(options.holder !== undefined ? { holder: options.holder } : {}),
    });
    const defaultTtl = Math.max(options.ttl ?? 15_000, options.minSessionTtl);
    return createLock(backend, { clock: context.clock, timing: { minTtl: options.minSessionTtl, defaultTtl } });
  },
  heartbeat(options, context) {
    const backend = new ConsulHeartbeatBackend(connect(options, context), {
      keyPrefix: options.keyPrefix,
      minSessionTtl: options.minSessionTtl,
      removeAfterTtls: options.removeAfterTtls,
      watchWait: options.watchWait,
    });
    return createHeartbeatStore(backend, {
      clock: context.clock,
      maxPayloadBytes: options.maxPayloadBytes,
      ...(options.ttl !== undefined ? { defaultTtl: options.ttl } : {}),
    });
  },
});
