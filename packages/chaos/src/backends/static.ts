import type { BackendProfile } from './profile.js';

/**
 * The static adapter keeps its lock and heartbeat tables in the process, so contenders in separate
 * processes could not share them. Here every contender (and the observer) runs in ONE host
 * process, each with its own Muster and clock: a "kill" is a simulated crash (renewals stop, nothing
 * is released), a "pause" stops the whole host (SIGSTOP), and there is no backend to restart or
 * proxy. Custom in-process adapters (`adapter` = a file) get the same treatment.
 */
export function staticProfile(options: { runId: string; ttl?: number; adapter?: string } = { runId: 'x' }): BackendProfile {
  const ttl = options.ttl ?? 1000;
  const adapter = options.adapter ?? 'static';
  const config = () => ({
    lock: { adapter, options: { scope: `chaos-${options.runId}` } },
    heartbeat: { adapter, options: { scope: `chaos-${options.runId}` } },
  });
  return {
    name: adapter === 'static' ? 'static' : adapter,
    inProcess: true,
    // No restart-behind: contenders of one process share its clock, so none can restart "behind" the others.
    faults: ['kill-holder', 'kill-any', 'pause-holder', 'clock-step'],
    ttl,
    // A released lock is taken at the next retry; a crashed holder's lease runs out after a ttl.
    livenessBound: 2 * ttl + 1000,
    heartbeatGrace: 1000,
    contenderConfig: config,
    observerConfig: config,
    memberId: (slot) => `c${slot}`,
    group: 'chaos',
    lockName: `chaos-${options.runId}`,
    close: async () => undefined,
  };
}
