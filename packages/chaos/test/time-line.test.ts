// The run's time line is shared by its processes even when the host's wall clock is stepped between
// their starts (a contender replaced after an NTP step). The step is simulated with libfaketime in the
// child only, on its wall clock only, as a process started after a real step would see it.
import { expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
const packageDir = fileURLToPath(new URL('..', import.meta.url));

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
    cwd: packageDir,
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

(libfaketime ? test : test.skip)('latency stays latency when the wall clock steps back 30 s mid-run (needs libfaketime)', async () => {
  const stepFile = join(mkdtempSync(join(tmpdir(), 'muster-chaos-step-')), 'faketime');
  writeFileSync(stepFile, '+0');
  const env = {
    ...process.env,
    LD_PRELOAD: libfaketime,
    FAKETIME_TIMESTAMP_FILE: stepFile,
    FAKETIME_NO_CACHE: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
  const fixture = fileURLToPath(new URL('fixtures/latency-across-step.mjs', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [fixture, stepFile], { env, cwd: packageDir });
  const { before, after } = JSON.parse(stdout) as { before: number; after: number | string };
  // 200 ms each way: about 400 ms, both times.
  expect(before).toBeLessThan(2000);
  expect(after).toBeLessThan(2000);
});
