// Scheduling priority of the bench's processes (--nice). On a machine shared with other work (load
// averages of 10-40 on 2 cores here), a woken process waits in the run queue behind other tenants'
// processes, and a proxy, woken twice more per request than a direct client, collects that wait in
// its added latency. A negative nice (as root) lets the bench's own processes preempt the rest, so
// the figures are the software's, not the neighbours'. Linux keeps nice per thread: new processes
// start under `nice` (their threads inherit it), running ones (Cassandra) are reniced thread by
// thread. With autogroups (kernel.sched_autogroup_enabled, each session a group) nice orders only
// within a group and groups share the CPU evenly, so the groups of the bench and of the Cassandra
// processes get the nice too (/proc/<pid>/autogroup).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** The command line that starts `argv` at `nice` (unchanged at 0). */
export function nicedCommand(argv, nice) {
  return nice ? ['nice', '-n', String(nice), ...argv] : argv;
}

function threadNice(pid, tid) {
  // Field 19 of stat; the command name (field 2) may hold spaces, so count from its closing paren.
  return Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ')[16]);
}

const renice = (tid, nice) => execFileSync('renice', ['-n', String(nice), '-p', String(tid)], { stdio: 'ignore' });

/** Sets every thread of the running `pids` to `nice`; returns a function that restores what they had. */
export function reniceProcesses(pids, nice) {
  if (!nice) return () => {};
  const before = [];
  for (const pid of pids) {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        before.push([tid, threadNice(pid, tid)]);
        renice(tid, nice);
      } catch {
        /* the thread ended meanwhile */
      }
    }
  }
  return () => {
    for (const [tid, value] of before) {
      try {
        renice(tid, value);
      } catch {
        /* gone meanwhile */
      }
    }
  };
}

/**
 * Sets the autogroup of each of `pids` to `nice`; returns a function that restores them. Does
 * nothing where the kernel has no autogroups.
 */
export function niceAutogroups(pids, nice) {
  if (!nice) return () => {};
  const before = new Map();
  for (const pid of pids) {
    const file = `/proc/${pid}/autogroup`;
    if (!existsSync(file)) continue;
    // "/autogroup-310 nice 0"
    const [group, , value] = readFileSync(file, 'utf8').trim().split(' ');
    if (before.has(group)) continue;
    before.set(group, { file, value });
    try {
      writeFileSync(file, String(nice));
    } catch (error) {
      restore();
      throw new Error(`cannot set ${file} to nice ${nice}: ${error.message}`, { cause: error });
    }
  }
  function restore() {
    for (const { file, value } of before.values()) {
      try {
        writeFileSync(file, value);
      } catch {
        /* its last process ended */
      }
    }
  }
  return restore;
}
