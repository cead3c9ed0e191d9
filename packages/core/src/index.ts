export * from './errors.js';
export { sleep, anySignal, throwIfAborted, backoffDelay, type WaitOptions } from './abort.js';
export { systemClock, type Clock } from './clock.js';
export { parseDuration, toMillis, type Duration } from './duration.js';

export { DiscoveryId, type Discovery, type DiscoveryEvent, type Endpoint, type Registration } from './ports/discovery.js';
export { LockId, type Lock, type Lease, type AcquireOptions, type WithLockOptions } from './ports/lock.js';
export {
  HeartbeatStoreId,
  type HeartbeatStore,
  type HeartbeatEvent,
  type MemberHeartbeat,
  type BeatOptions,
  type JsonValue,
} from './ports/heartbeat.js';

export { EventChannel } from './coordination/channel.js';
export { EndpointSet, byId, sameValue } from './coordination/endpoint-set.js';
export {
  createLock,
  simulateCrash,
  defaultLockTiming,
  type LockBackend,
  type LeaseGrant,
  type LockTiming,
  type BackendCallOptions,
} from './coordination/lock-client.js';
export {
  createHeartbeatStore,
  newIncarnation,
  type HeartbeatBackend,
  type HeartbeatRecord,
  type HeartbeatClientOptions,
} from './coordination/heartbeat-client.js';
export { isTransient } from './coordination/transient.js';
export { LeaderElector, type LeaderElectorOptions } from './coordination/leader-elector.js';
export { debounceDiscovery, type DebounceOptions } from './coordination/debounce.js';
export { FencedResource, StaleTokenError } from './coordination/fencing.js';
export { nextFencingToken, parseFencingToken, fencingTokenFloor } from './coordination/fencing-token.js';

export {
  defineAdapter,
  isAdapter,
  type AdapterCheck,
  type AdapterDefinition,
  type DefinedAdapter,
  type AdapterContext,
} from './runtime/adapter.js';
export {
  s,
  validate,
  formatPath,
  type Schema,
  type Infer,
  type ObjectOf,
  type Issue,
  type Path,
  type JsonSchema,
} from './runtime/schema.js';
export {
  loadConfig,
  parseYaml,
  ConfigSource,
  portNames,
  type MusterConfig,
  type PortSection,
  type PortName,
  type LoadOptions,
} from './runtime/config.js';
export { builtinAdapters, importAdapter } from './runtime/resolve.js';
export { createMuster, Muster, type CreateOptions } from './runtime/muster.js';
export { checkConfig, type CheckOptions, type CheckedConfig, type CheckedPort } from './runtime/check.js';
export { redactSecrets, redacted } from './runtime/redact.js';
export { createDiscovery, type DiscoveryClientOptions } from './discovery/create-discovery.js';
export type { DiscoveryBackend, DiscoveryView, DiscoveryCallOptions, RegistrationBackend } from './discovery/backend.js';
export type { DiscoveryBackoff } from './discovery/watch-loop.js';
