import type { ServiceIdentifier } from 'inversify';
import type { Discovery } from '../ports/discovery.js';
import type { HeartbeatStore } from '../ports/heartbeat.js';
import type { Lock } from '../ports/lock.js';
import type { Muster } from '../runtime/muster.js';

// Symbol.for, so that two copies of @muster/core still agree on what they bind and inject.
export const DiscoveryId: ServiceIdentifier<Discovery> = Symbol.for('muster.Discovery');
export const LockId: ServiceIdentifier<Lock> = Symbol.for('muster.Lock');
export const HeartbeatStoreId: ServiceIdentifier<HeartbeatStore> = Symbol.for('muster.HeartbeatStore');
/** The Muster itself: its config (an application's own section) and which adapter serves each port. */
export const MusterId: ServiceIdentifier<Muster> = Symbol.for('muster.Muster');
