// The run's time line is shared by its processes even when the host's wall clock is stepped between
// their starts (a contender replaced after an NTP step). The step is simulated with libfaketime in the
// child only, on its wall clock only, as a process started after a real step would see it.
import { expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { realNow, timeLineEnv } from '@muster/chaos';

const libfaketime = [
  process.env.MUSTER_FAKETIME_LIB,
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/local/lib/faketime/libfaketime.so.1',
].find((path) => path !== undefined && existsSync(path));

const stepMs = 60_000;

/** realNow() read in a child process whose wall clock runs `stepMs` ahead of this one's. */
async function childRealNow(): Promise<number> {
  const script = `import { realNow } from '@muster/chaos'; process.stdout.write(String(realNow()));`;
  const env = {
    ...timeLineEnv(),
    LD_PRELOAD: libfaketime,
    FAKETIME: `+${stepMs / 1000}s`,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    env,
    cwd: fileURLToPath(new URL('..', import.meta.url)),
  });
  return Number(stdout);
}

(libfaketime ? test : test.skip)(
  'a process started on a wall clock stepped 60 s shares the run time line (needs libfaketime)',
  async () => {
    const before = realNow();
    const child = await childRealNow();
    const after = realNow();
    expect(child).toBeGreaterThanOrEqual(before);
    expect(child).toBeLessThanOrEqual(after);
  },
);
