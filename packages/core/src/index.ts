/**
 * @muster/core — what an application uses: createMuster, the three ports and their types,
 * LeaderElector, debounce, fencing on the resource side, and the errors. Adapter authors find their
 * building blocks in `@muster/core/adapter`, conformance suites in `@muster/core/testing`, and an
 * application with its own inversify container loads Muster there with `@muster/core/inversify`.
 */
export {
  MusterError,
  ConfigError,
  AdapterNotFoundError,
  AdapterLoadError,
  AdapterInvalidError,
  AdapterVersionError,
  AdapterStartError,
  PortNotConfiguredError,
  LockLostError,
  TimeoutError,
  AbortError,
  ClosedError,
  BackendError,
  PayloadTooLargeError,
  SupersededError,
  InvalidArgumentError,
  type ErrorCode,
  type SourcePosition,
} from './errors.js';
export type { WaitOptions } from './abort.js';
export { systemClock, type Clock } from './clock.js';

export type { Discovery, DiscoveryEvent, Endpoint, Registration } from './ports/discovery.js';
export type { Lock, Lease, AcquireOptions, WithLockOptions } from './ports/lock.js';
export type { HeartbeatStore, HeartbeatEvent, MemberHeartbeat, BeatOptions, JsonValue } from './ports/heartbeat.js';

export { LeaderElector, type LeaderElectorOptions } from './coordination/leader-elector.js';
export { debounceDiscovery, type DebounceOptions } from './coordination/debounce.js';
export { FencedResource, StaleTokenError } from './coordination/fencing.js';

export { createMuster, Muster, type CreateOptions } from './runtime/muster.js';
// An application reads its own config section beside the ports' (with the schema builder from
// @muster/core/adapter) and runs the same checks as createMuster for a --check flag.
export { loadConfig, ConfigSource, type MusterConfig, type PortSection, type PortName, type LoadOptions } from './runtime/config.js';
export { checkConfig, type CheckOptions, type CheckedConfig, type CheckedPort } from './runtime/check.js';
export { redactSecrets } from './runtime/redact.js';
