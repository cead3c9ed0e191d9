/**
 * @muster/core/inversify — Muster in an application's own inversify container. inversify is a peer
 * dependency: this entry imports the application's copy (ESM, one instance), and nothing of
 * inversify loads for an application that never imports this entry.
 */
export { loadMuster, musterModule } from './muster-module.js';
export { DiscoveryId, LockId, HeartbeatStoreId, MusterId } from './identifiers.js';
