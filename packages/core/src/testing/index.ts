/**
 * @muster/core/testing — the conformance suites every adapter runs against its real backend.
 *
 *   import { describe, test } from '@jest/globals';
 *   import { lockConformance } from '@muster/core/testing';
 *   lockConformance({ describe, test }, { name: 'my-adapter', factory: () => makeLock(), ttl: 2000 });
 */
export { lockConformance, type LockSuiteOptions } from './lock.js';
export {
  discoveryConformance,
  type DiscoverySuiteOptions,
  type DiscoveryControl,
  type DiscoveryCapabilities,
  type DiscoveryOutage,
} from './discovery.js';
export { eventSummary, takeEvents } from './discovery-cases.js';
export { heartbeatConformance, type HeartbeatSuiteOptions } from './heartbeat.js';
export type { BackendHang } from './hang.js';
export { eventually, nextWithin, nextMatching, uniqueName, type SuiteRunner } from './runner.js';
// A test hook, not an API: a lock client from createLock stops renewing without releasing, as a
// crashed process would (the chaos run and the scheduler's failover demo use it).
export { simulateCrash } from '../coordination/lock-client.js';
