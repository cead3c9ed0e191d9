// Which suites skipped for a missing server, recorded for the one summary at the end of `npm test`
// (scripts/testenv/skip-summary-reporter.mjs): jest hides the console output of fully skipped
// suites, so a warning printed there alone never reaches the user.
import { appendFileSync } from 'node:fs';

/** Set by the reporter in jest's main process before workers start; workers inherit it. */
export const SKIP_LOG_VARIABLE = 'MUSTER_TESTENV_SKIP_LOG';

/** The test file calling testServer(), from the stack (it runs at module level, outside any test). */
function callerTestFile() {
  const frames = new Error().stack?.split('\n') ?? [];
  for (const frame of frames) {
    const match = /(?:\(|at )(?:file:\/\/)?([^()\s]+\.test\.[cm]?[tj]s)/.exec(frame);
    if (match) return match[1];
  }
  return undefined;
}

export function recordSkip(server) {
  const log = process.env[SKIP_LOG_VARIABLE];
  if (!log) return;
  appendFileSync(log, JSON.stringify({ server, file: callerTestFile() }) + '\n');
}
