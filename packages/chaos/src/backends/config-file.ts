import type { BackendProfile } from './profile.js';

/**
 * Any adapter, ours or a third party's, through a Muster config file that selects it for `lock`
 * and `heartbeat`: every contender and the observer load that file. Without knowledge of the
 * backend there is no proxy, no deletion and no restart; process faults and clock steps remain.
 */
export function configFileProfile(options: { runId: string; file: string; ttl?: number; livenessBound?: number }): BackendProfile {
  const ttl = options.ttl ?? 3000;
  return {
    name: options.file,
    inProcess: false,
    faults: ['kill-holder', 'kill-any', 'pause-holder', 'zombie', 'clock-step', 'restart-behind'],
    ttl,
    // Unknown backend: allow what a Consul-like session reaping would need.
    livenessBound: options.livenessBound ?? 3 * ttl + 2000,
    heartbeatGrace: 2000,
    contenderConfig: () => options.file,
    observerConfig: () => options.file,
    memberId: (slot) => `chaos-${options.runId}-c${slot}`,
    group: `chaos-${options.runId}`,
    lockName: `chaos-${options.runId}`,
    close: async () => undefined,
  };
}
