// npm test ends with one summary of the suites skipped per missing server (issue 13): a suite's
// testServer() records its skip, the reporter groups them and names the command that starts them.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import SkipSummaryReporter from '../skip-summary-reporter.mjs';
import { testServer } from '../state.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const saved = { ...process.env };

afterEach(() => {
  for (const key of ['MUSTER_TESTENV_DIR', 'MUSTER_TESTENV_SKIP_LOG', 'CI']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

describe('the skip summary', () => {
  it('lists each missing server with the files that skipped for it, and the command to start them', () => {
    const reporter = new SkipSummaryReporter({ rootDir: repo });
    process.env.MUSTER_TESTENV_DIR = mkdtempSync(join(tmpdir(), 'muster-no-servers-')); // no state.json: nothing runs
    delete process.env.CI;
    expect(testServer('consul')).toBeUndefined();
    expect(testServer('cassandra3')).toBeUndefined();
    expect(testServer('consul')).toBeUndefined();

    const text = reporter.summary();
    expect(text).toContain('Skipped: 1 test file needs a test server that is not running.');
    expect(text).toContain('  cassandra3: 1 file\n    scripts/testenv/test/skip-summary.test.ts');
    expect(text).toContain('  consul: 1 file\n    scripts/testenv/test/skip-summary.test.ts');
    expect(text).toContain('npm run testenv -- up cassandra3 consul');
  });

  it('says nothing when nothing was skipped', () => {
    expect(new SkipSummaryReporter({ rootDir: repo }).summary()).toBe('');
  });
});
