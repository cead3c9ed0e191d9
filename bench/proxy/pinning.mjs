// Core pinning with taskset, in one of two layouts (planPinning), printed at the start of a run. The
// Cassandra processes get their original affinity back when the run ends.
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { nicedCommand } from './priority.mjs';

function affinity(pid) {
  const out = execFileSync('taskset', ['-cp', String(pid)], { encoding: 'utf8' });
  return out.trim().split(': ').pop();
}

function setAffinity(pid, cpus) {
  execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
}

/**
 * Plans the pinning of `layout` over `cores` cores: `backend` cores for the Cassandra pids, `load`
 * for the load generator, `proxy` for the proxy under test (and the echo process of the hop
 * measurement). Without taskset or with fewer than 2 cores it plans nothing (and says so).
 *  - split: Cassandra on core 0, proxy and load generator on the last core: what a proxy burns is
 *    taken from the generator and shows up as lost throughput; the backend gets one core only.
 *  - spread: Cassandra on every core (three JVMs need more than one), the load generator on core 0
 *    and the proxy on the last, so the two never wait for each other, only for Cassandra.
 *  - own: Cassandra and the load generator share the first cores, the proxy has the last to itself:
 *    what a proxy costs then shows as latency and lost throughput only where it is the bottleneck
 *    (direct leaves that core idle).
 */
export function planPinning(layout, { cores = availableParallelism(), hasTaskset = tasksetPresent } = {}) {
  const none = (why) => ({ layout: 'off', backend: undefined, load: undefined, proxy: undefined, why });
  if (layout === 'off') return none('off (--pin off)');
  if (cores < 2) return none(`off (${cores} core)`);
  if (!hasTaskset()) return none('off (no taskset)');
  // The last core for the front: tools and shells tend to land on core 0 first.
  const last = String(cores - 1);
  if (layout === 'spread') {
    const all = `0-${last}`;
    return {
      layout,
      backend: all,
      load: '0',
      proxy: last,
      why: `spread: Cassandra on cores ${all}, load generator on core 0, proxy on core ${last}`,
    };
  }
  const backend = cores > 2 ? `0-${cores - 2}` : '0';
  if (layout === 'own') {
    return {
      layout,
      backend,
      load: backend,
      proxy: last,
      why: `own: Cassandra and load generator on core ${backend}, proxy alone on core ${last}`,
    };
  }
  return { layout, backend, load: last, proxy: last, why: `split: Cassandra on core ${backend}, proxy and load generator on core ${last}` };
}

function tasksetPresent() {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
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

/** The command line that starts `argv` on `cpus` (unchanged when not pinning), at `nice` (priority.mjs). */
export function pinnedCommand(argv, cpus, nice = 0) {
  return nicedCommand(cpus ? ['taskset', '-c', cpus, ...argv] : argv, nice);
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
