// Core pinning with taskset: Cassandra on one core, the proxy and the load generator on the other,
// so a proxy's CPU cost shows up as lost throughput instead of hiding on an idle core. The shared
// test servers get their original affinity back when the run ends (restore()).
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

function affinity(pid) {
  const out = execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' });
  return out.trim().split(': ').pop();
}

function setAffinity(pid, cpus) {
  execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * Plans the pinning: `backend` cores for the Cassandra pids, `front` for everything the bench
 * starts. Without taskset or with fewer than 2 cores it plans nothing (and says so).
 */
export function planPinning(enabled) {
  if (!enabled) return { backend: undefined, front: undefined, why: 'off (--no-pin)' };
  const cores = availableParallelism();
  if (cores < 2) return { backend: undefined, front: undefined, why: `off (${cores} core)` };
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
  } catch {
    return { backend: undefined, front: undefined, why: 'off (no taskset)' };
  }
  // The last core for the front: tools and shells tend to land on core 0 first.
  return { backend: '0', front: String(cores - 1), why: `Cassandra on core 0, proxies and load generator on core ${cores - 1}` };
}

/** Pins running processes (all their threads); returns a function that restores what they had. */
export function pinProcesses(pids, cpus) {
  if (!cpus) return () => {};
  const before = new Map(pids.map((pid) => [pid, affinity(pid)]));
  for (const pid of pids) setAffinity(pid, cpus);
  return () => {
    for (const [pid, cpus] of before) {
      try {
        setAffinity(pid, cpus);
      } catch {
        /* gone meanwhile */
      }
    }
  };
}

/** The command line that starts `argv` on `cpus` (unchanged when not pinning). */
export function pinnedCommand(argv, cpus) {
  return cpus ? ['taskset', '-c', cpus, ...argv] : argv;
}

/**
 * Runs `cleanup` (synchronous) when the bench is interrupted, then exits as the signal would: an
 * interrupted run must not leave the shared Cassandra pinned to one core or proxies running.
 */
export function cleanUpOnSignal(cleanup) {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ]) {
    process.once(signal, () => {
      cleanup();
      process.exit(code);
    });
  }
}
