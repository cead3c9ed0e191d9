// The one path every skip takes, for a missing test server (testServer() in state.mjs) or a missing
// optional tool (testTool() in optional-tools.mjs): locally it warns and records the skip for the one
// summary at the end of `npm test` (scripts/testenv/skip-summary-reporter.mjs), because jest hides
// the console output of fully skipped suites; under CI=true it throws, so CI never skips silently.
import { appendFileSync } from 'node:fs';

/** Set by the reporter in jest's main process before workers start; workers inherit it. */
export const SKIP_LOG_VARIABLE = 'MUSTER_TESTENV_SKIP_LOG';

/**
 * The test file that asked: jest's own record of the file it runs (set before the file's imports are
 * evaluated, so a helper module that checks for its server counts for the test file importing it),
 * else a test file on the stack.
 */
function callerTestFile() {
  const testPath = globalThis.expect?.getState?.().testPath;
  if (testPath) return testPath;
  const frames = new Error().stack?.split('\n') ?? [];
  for (const frame of frames) {
    const match = /(?:\(|at )(?:file:\/\/)?([^()\s]+\.test\.[cm]?[tj]s)/.exec(frame);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * Records one skip: `kind` is 'server' or 'tool', `name` what is missing, `why` what is wrong with
 * it here, `how` the command that provides it.
 */
export function recordSkip({ kind, name, why, how }) {
  const log = process.env[SKIP_LOG_VARIABLE];
  if (!log) return;
  appendFileSync(log, JSON.stringify({ kind, name, why, how, file: callerTestFile() }) + '\n');
}

/**
 * A test cannot run because `name` is missing: throws under CI=true (unless `optedOut`: a choice the
 * user made with an environment variable, or a tool built only on request), else warns and records it. Returns undefined, for
 * `testServer(...) ?? skip`-style callers.
 */
export function skipFor({ kind, name, why, how, optedOut = false }) {
  const text = `${kind} '${name}': ${why}; ${how}`;
  if (process.env.CI === 'true' && !optedOut) {
    throw new Error(`CI=true and a test needs the ${text} (CI fails instead of skipping)`);
  }
  console.warn(`\n*** SKIPPED: ${text} ***\n`);
  recordSkip({ kind, name, why, how });
  return undefined;
}
