// npm test ends with one summary of what was skipped (issue 13): a suite's testServer() or
// testTool() records its skip through one path (skipFor), the reporter groups them per missing
// server or tool and names the command that provides each; under CI=true a skip is an error.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testTool } from '../optional-tools.mjs';
import { lookForConsul } from './fixtures/needs-consul.mjs';
import SkipSummaryReporter from '../skip-summary-reporter.mjs';
import { testServer } from '../state.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const saved = { ...process.env };
const here = 'scripts/testenv/test/skip-summary.test.ts';

afterEach(() => {
  for (const key of [
    'MUSTER_TESTENV_DIR',
    'MUSTER_TESTENV_SKIP_LOG',
    'CI',
    'PATH',
    'MUSTER_DRAIN_GOCQL',
    'MUSTER_TESTENV_CACHE',
    'MUSTER_RUST_DRIVER',
  ]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

/** A machine where no program is on PATH: every tool found through PATH is missing. */
const withoutTools = () => (process.env.PATH = mkdtempSync(join(tmpdir(), 'muster-empty-path-')));

describe('the skip summary', () => {
  it('lists each missing server with the files that skipped for it, and the command to start them', () => {
    const reporter = new SkipSummaryReporter({ rootDir: repo });
    process.env.MUSTER_TESTENV_DIR = mkdtempSync(join(tmpdir(), 'muster-no-servers-')); // no state.json: nothing runs
    delete process.env.CI;
    expect(testServer('consul')).toBeUndefined();
    expect(testServer('cassandra3')).toBeUndefined();
    expect(testServer('consul')).toBeUndefined();

    const text = reporter.summary();
    expect(text).toContain('Skipped: 1 test file (in whole or in part), for what is missing here:');
    expect(text).toMatch(new RegExp(`  server cassandra3: not running \\(no entry in .*state\\.json\\); 1 file\\n    ${here}`));
    expect(text).toMatch(new RegExp(`  server consul: not running .*; 1 file\\n    ${here}`));
    expect(text).toContain('npm run testenv -- up cassandra3 consul');
  });

  it('lists a missing tool in the same summary, with what is missing and the command that provides it', () => {
    const reporter = new SkipSummaryReporter({ rootDir: repo });
    process.env.MUSTER_TESTENV_DIR = mkdtempSync(join(tmpdir(), 'muster-no-servers-'));
    delete process.env.CI;
    withoutTools();
    expect(testTool('gocql')).toBe(false);
    expect(testTool('java-driver')).toBe(false);
    expect(testServer('cassandra')).toBeUndefined();

    const text = reporter.summary();
    expect(text).toContain(`  tool gocql: go is not installed; 1 file\n    ${here}\n    provide it: install Go`);
    expect(text).toContain(
      `  tool java-driver: javac, java or mvn is not installed; 1 file\n    ${here}\n    provide it: install a JDK 17 and Maven`,
    );
    expect(text).toContain('npm run testenv -- up cassandra');
    expect(text).toContain('Provide the tools as said above, then:');
  });

  it('under CI=true a missing tool fails the suite instead of skipping it', () => {
    process.env.CI = 'true';
    withoutTools();
    expect(() => testTool('python-driver')).toThrow(
      /CI=true and a test needs the tool 'python-driver': python3 with venv\/ensurepip is not installed; install Python 3/,
    );
    expect(() => testTool('openssl')).toThrow(/CI=true .*'openssl'/);
  });

  it('a tool turned off by its variable is listed, and does not fail CI', () => {
    const reporter = new SkipSummaryReporter({ rootDir: repo });
    process.env.CI = 'true';
    process.env.MUSTER_DRAIN_GOCQL = 'off';
    expect(testTool('gocql', { optOut: 'MUSTER_DRAIN_GOCQL' })).toBe(false);
    expect(reporter.summary()).toContain(
      `  tool gocql: turned off by MUSTER_DRAIN_GOCQL=off; 1 file\n    ${here}\n    provide it: unset MUSTER_DRAIN_GOCQL`,
    );
  });

  it('an opt-out variable turns the tool off only in a file that names it', () => {
    const reporter = new SkipSummaryReporter({ rootDir: repo });
    delete process.env.CI;
    withoutTools();
    process.env.MUSTER_DRAIN_GOCQL = 'off';
    expect(testTool('gocql')).toBe(false);
    expect(reporter.summary()).toContain('  tool gocql: go is not installed; 1 file');
    expect(reporter.summary()).not.toContain('turned off');
  });

  it('a tool built only on request (the Rust driver check) is listed when not built, and does not fail CI', () => {
    const reporter = new SkipSummaryReporter({ rootDir: repo });
    process.env.CI = 'true';
    process.env.MUSTER_TESTENV_CACHE = mkdtempSync(join(tmpdir(), 'muster-empty-cache-'));
    delete process.env.MUSTER_RUST_DRIVER;
    expect(testTool('rust-driver')).toBe(false);
    expect(reporter.summary()).toContain(
      `  tool rust-driver: the Rust scylla driver check is not built; 1 file\n    ${here}\n    provide it: MUSTER_RUST_DRIVER=build npm test`,
    );
  });

  it('a skip found by a helper module counts for the test file that imports it', async () => {
    const reporter = new SkipSummaryReporter({ rootDir: repo });
    process.env.MUSTER_TESTENV_DIR = mkdtempSync(join(tmpdir(), 'muster-no-servers-'));
    delete process.env.CI;
    await lookForConsul();
    expect(reporter.summary()).toMatch(new RegExp(`  server consul: not running .*; 1 file\\n    ${here}`));
  });

  it('says nothing when nothing was skipped', () => {
    expect(new SkipSummaryReporter({ rootDir: repo }).summary()).toBe('');
  });
});

describe('every skip takes the one path', () => {
  // A test file that looks for a tool itself and prints its own banner is invisible in the summary
  // (jest hides a skipped suite's output) and, unless it remembers to, skips silently under CI.
  it('no test file checks for a tool or prints a SKIPPED banner of its own', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (/\.test\.ts$/.test(entry.name) && relative(repo, path) !== here) {
          const text = readFileSync(path, 'utf8');
          if (/\*\*\* SKIPPED|hasTool\(/.test(text)) offenders.push(relative(repo, path));
        }
      }
    };
    for (const top of ['packages', 'scripts', 'examples', 'deploy', 'bench']) walk(join(repo, top));
    expect(offenders).toEqual([]);
  });
});
