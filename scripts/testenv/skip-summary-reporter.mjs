// A jest reporter: after the run, one summary of the suites skipped per missing test server and
// the command that starts those servers. Suites record their skips through testServer()
// (scripts/testenv/skips.mjs) into a file this reporter names before any worker starts.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { SKIP_LOG_VARIABLE } from './skips.mjs';

export default class SkipSummaryReporter {
  #dir;
  #log;

  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.#dir = mkdtempSync(join(tmpdir(), 'muster-skips-'));
    this.#log = join(this.#dir, 'skips.jsonl');
    process.env[SKIP_LOG_VARIABLE] = this.#log;
  }

  onRunComplete() {
    const text = this.summary();
    rmSync(this.#dir, { recursive: true, force: true });
    // jest adds its own summary reporter after every custom one: print when the process ends, so
    // this is the last thing the user reads.
    if (text) process.once('exit', () => writeSync(2, text));
  }

  /** The summary of what was recorded so far, or '' when nothing was skipped. */
  summary() {
    const lines = existsSync(this.#log) ? readFileSync(this.#log, 'utf8').split('\n').filter(Boolean) : [];
    const byServer = new Map();
    for (const line of lines) {
      const { server, file } = JSON.parse(line);
      if (!byServer.has(server)) byServer.set(server, new Set());
      if (file) byServer.get(server).add(relative(this.rootDir, file));
    }
    if (byServer.size === 0) return '';
    const servers = [...byServer.keys()].sort();
    const total = new Set([...byServer.values()].flatMap((files) => [...files])).size;
    const out = [
      '',
      `Skipped: ${total} test file${total === 1 ? '' : 's'} need${total === 1 ? 's' : ''} a test server that is not running.`,
    ];
    for (const server of servers) {
      const files = [...byServer.get(server)].sort();
      out.push(`  ${server}: ${files.length} file${files.length === 1 ? '' : 's'}`, ...files.map((file) => `    ${file}`));
    }
    out.push(
      '',
      `Start them and run again (the first start builds them into ~/.cache/muster-testenv):`,
      `  npm run testenv -- up ${servers.join(' ')}`,
      '  npm test',
      '',
    );
    return out.join('\n') + '\n';
  }
}
