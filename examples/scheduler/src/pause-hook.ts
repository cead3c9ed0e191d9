import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SchedulerLog } from './log.js';

/**
 * A test hook for the failover test (SCHEDULER_TEST_PAUSE_DIR): right before a leader write, after
 * every check this process makes itself, the process stops itself with SIGSTOP when the file
 * `<dir>/<id>` exists (it is removed first, so the pause happens once). That is a GC pause or a
 * scheduling stall at the worst moment, made on purpose: when the test resumes the process, its
 * write goes out with the token of a lease that has since passed to another master, and only the
 * store can refuse it.
 */
export function pauseBeforeLeaderWrite(dir: string, id: string, log: SchedulerLog): (op: string) => void {
  const trigger = join(dir, id);
  return (op) => {
    if (!existsSync(trigger)) return;
    rmSync(trigger, { force: true });
    // stdout is a pipe here, written synchronously on Linux: the test reads this before the stop.
    log('pausing-before-write', { op });
    // A signal a process sends itself is delivered before kill() returns: nothing runs in between.
    process.kill(process.pid, 'SIGSTOP');
    log('resumed-before-write', { op });
  };
}
