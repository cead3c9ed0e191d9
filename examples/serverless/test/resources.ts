import { createHook, executionAsyncId } from 'node:async_hooks';
import { handleTypes } from './handle-types.mjs';

/**
 * Async resources that can keep work going — timers, immediates, sockets, servers, DNS lookups,
 * child processes, watchers, signal handlers — from creation until destroyed. Unlike
 * getActiveResourcesInfo(), this also sees unref'd timers and sockets. (Loader file handles and
 * the crypto entropy pool are left out: they hold nothing and are only reclaimed by the GC.)
 */
export interface ResourceTracker {
  /** What is alive now of what was created while recording. */
  live(): string[];
  /** Stops recording new resources (destroys are still seen), so the tracker's own waiting is not counted. */
  pause(): void;
  resume(): void;
  stop(): void;
}

/**
 * Only resources descended from the caller's async context are recorded (by trigger id): jest runs
 * many test files in one process, and what another file left behind (a driver still reconnecting)
 * is not this code's leak.
 */
export function trackResources(): ResourceTracker {
  const live = new Map<number, string>();
  const ours = new Set<number>([executionAsyncId()]);
  let recording = true;
  const hook = createHook({
    init(id, type, triggerAsyncId) {
      if (!ours.has(triggerAsyncId)) return;
      ours.add(id);
      if (recording && handleTypes.has(type)) live.set(id, type);
    },
    destroy(id) {
      live.delete(id);
      ours.delete(id);
    },
  }).enable();
  return {
    live: () => [...live.values()].sort(),
    pause: () => void (recording = false),
    resume: () => void (recording = true),
    stop: () => void hook.disable(),
  };
}

/** Waits until nothing recorded is alive, or `timeout` ms; returns what is left. */
export async function drained(tracker: ResourceTracker, timeout: number): Promise<string[]> {
  tracker.pause();
  try {
    const deadline = Date.now() + timeout;
    while (tracker.live().length > 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    return tracker.live();
  } finally {
    tracker.resume();
  }
}
