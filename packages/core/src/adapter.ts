/**
 * @muster/core/adapter — what an adapter author builds with (the SDK beside the application API of
 * `@muster/core`): defineAdapter and the options schema builder, the Discovery, Lock and Heartbeat
 * backend contracts that core turns into full ports, and the pieces adapters share (event channels,
 * endpoint sets, fencing tokens, abortable waits, what counts as transient). The port types and the
 * errors an adapter throws come from `@muster/core`.
 */
export { defineAdapter, type AdapterCheck, type AdapterDefinition, type DefinedAdapter, type AdapterContext } from './runtime/adapter.js';
export { s, validate, type Schema, type Infer, type ObjectOf, type Issue, type Path, type JsonSchema } from './runtime/schema.js';

export { createLock, type LockBackend, type LeaseGrant, type LockTiming, type BackendCallOptions } from './coordination/lock-client.js';
export {
  createHeartbeatStore,
  type HeartbeatBackend,
  type HeartbeatRecord,
  type HeartbeatClientOptions,
} from './coordination/heartbeat-client.js';
export { createDiscovery, type DiscoveryClientOptions } from './discovery/create-discovery.js';
export type { DiscoveryBackend, DiscoveryView, DiscoveryCallOptions, RegistrationBackend } from './discovery/backend.js';
export type { DiscoveryBackoff } from './discovery/watch-loop.js';
export { nextFencingToken, parseFencingToken, fencingTokenFloor } from './coordination/fencing-token.js';

export { EventChannel } from './coordination/channel.js';
export { EndpointSet, byId, sameValue } from './coordination/endpoint-set.js';
export { isTransient } from './coordination/transient.js';
export { sleep, anySignal, throwIfAborted, backoffDelay } from './abort.js';
export { abortErrorFrom } from './errors.js';
