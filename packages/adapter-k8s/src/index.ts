import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { BeatOptions, HeartbeatStore } from '@muster/core';
import { createHeartbeatStore, createLock, defineAdapter, s, type AdapterContext, type Infer } from '@muster/core/adapter';
import { connect } from './client.js';
import { kubeConfigOption } from './kube-config-option.js';
import { endpointSliceDiscovery } from './discovery.js';
import { LeaseHeartbeatBackend } from './heartbeat.js';
import { LeaseLockBackend } from './lock.js';
import { resolveConnection } from './resolve-connection.js';

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const optionsSchema = s.object({
  kubeconfig: s.optional(
    s.describe(
      s.string({ minLength: 1 }),
      'kubeconfig file (relative to the config file); default: in-cluster config in a pod, else $KUBECONFIG or ~/.kube/config',
    ),
  ),
  kubeConfig: s.optional(kubeConfigOption),
  context: s.optional(s.describe(s.string({ minLength: 1 }), 'kubeconfig context (default: its current-context)')),
  namespace: s.optional(
    s.describe(
      s.string({ pattern: dnsLabel, hint: 'a namespace name (lower-case letters, digits and -)' }),
      'overrides the namespace of the context or the pod',
    ),
  ),
  inCluster: s.optional(s.describe(s.boolean(), 'true: only the pod service account; false: never')),
  requestTimeout: s.withDefault(s.duration({ min: 100 }), 30_000),
  port: s.optional(s.describe(s.string({ minLength: 1 }), "discovery: the named port reported as each endpoint's port")),
  resync: s.withDefault(s.describe(s.duration({ min: 1000 }), 'discovery: relist this often and emit what differs'), 300_000),
  holder: s.optional(
    s.describe(
      s.string({ minLength: 1 }),
      'lock: holderIdentity prefix (default: POD_NAME or the host name); a random suffix keeps clients apart',
    ),
  ),
  ttl: s.optional(s.describe(s.duration({ min: 1000 }), 'lock and heartbeat: default lease / heartbeat ttl (whole seconds are published)')),
  lockPrefix: s.withDefault(s.string(), ''),
  heartbeatPrefix: s.withDefault(s.string({ minLength: 1 }), 'muster-hb-'),
  group: s.optional(s.describe(s.string({ minLength: 1 }), 'heartbeat: the group beat() uses when given none')),
  maxPayloadBytes: s.withDefault(s.integer({ min: 1, max: 200_000 }), 4096),
});

export type KubernetesOptions = Infer<typeof optionsSchema>;

function connectionOptions(options: KubernetesOptions, context: AdapterContext) {
  return {
    kubeconfig: options.kubeconfig,
    kubeConfig: options.kubeConfig,
    context: options.context,
    namespace: options.namespace,
    inCluster: options.inCluster,
    requestTimeout: options.requestTimeout,
    baseDir: context.configDir,
    describe: (option: string) => context.describe([option]),
  };
}

const connectFor = (options: KubernetesOptions, context: AdapterContext) => connect(connectionOptions(options, context));

/** Beats into the configured group when the caller names none. */
function withDefaultGroup(store: HeartbeatStore, group: string | undefined): HeartbeatStore {
  if (group === undefined) return store;
  return {
    beat: (memberId, payload, beatOptions?: BeatOptions) =>
      store.beat(memberId, payload, { ...beatOptions, group: beatOptions?.group ?? group }),
    get: (memberId, o) => store.get(memberId, o),
    list: (g, o) => store.list(g, o),
    watch: (g, o) => store.watch(g, o),
    remove: (memberId, o) => store.remove(memberId, o),
    close: () => store.close(),
  };
}

/**
 * Kubernetes: discovery from EndpointSlices, locks and heartbeats on coordination.k8s.io/v1
 * Leases. Each port opens its own connection when it is created; importing this module loads
 * neither the YAML parser nor @kubernetes/client-node (see client.ts for what loads when).
 */
export default defineAdapter({
  name: 'kubernetes',
  core: '^0.1.0',
  options: optionsSchema,
  // Only a kubeconfig file the options name is checked (read with its context, certificate and token
  // files; an exec plugin runs at the first request, not here): one found by auto-detection (a pod's
  // service account, $KUBECONFIG, ~/.kube/config) belongs where the proxy runs, not where --check runs.
  async check(_port, options, context) {
    if (options.kubeconfig === undefined) return;
    await resolveConnection(connectionOptions(options, context));
  },
  async discovery(options, context) {
    return endpointSliceDiscovery({
      client: await connectFor(options, context),
      port: options.port,
      resync: options.resync,
      podName: process.env.POD_NAME,
      clock: context.clock,
    });
  },
  async lock(options, context) {
    const holder = `${options.holder ?? process.env.POD_NAME ?? hostname()}_${randomUUID().slice(0, 8)}`;
    return createLock(
      new LeaseLockBackend({ client: await connectFor(options, context), holder, clock: context.clock, leasePrefix: options.lockPrefix }),
      { clock: context.clock, timing: { minTtl: 1000, ...(options.ttl !== undefined ? { defaultTtl: options.ttl } : {}) } },
    );
  },
  async heartbeat(options, context) {
    const store = createHeartbeatStore(
      new LeaseHeartbeatBackend({ client: await connectFor(options, context), leasePrefix: options.heartbeatPrefix }),
      {
        clock: context.clock,
        minTtl: 1000,
        maxPayloadBytes: options.maxPayloadBytes,
        ...(options.ttl !== undefined ? { defaultTtl: options.ttl } : {}),
      },
    );
    return withDefaultGroup(store, options.group);
  },
});

export type { UserKubeConfig } from './user-kube-config.js';
