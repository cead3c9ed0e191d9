// A jest reporter: after the run, one summary of the suites skipped per missing test server or
// optional tool, and the command that provides each. Suites record their skips through testServer()
// and testTool() (both via skipFor() in skips.mjs) into a file this reporter names before any worker
// starts.
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
    // One group per missing thing (a server, a tool), with the files that skipped for it.
    const groups = new Map();
    for (const line of lines) {
      const { kind, name, why, how, file } = JSON.parse(line);
      const key = `${kind} ${name}`;
      if (!groups.has(key)) groups.set(key, { kind, name, why, how, files: new Set() });
      if (file) groups.get(key).files.add(relative(this.rootDir, file));
    }
    if (groups.size === 0) return '';
    const sorted = [...groups.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
    const total = new Set(sorted.flatMap((g) => [...g.files])).size;
    const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
    const out = ['', `Skipped: ${plural(total, 'test file')} (in whole or in part), for what is missing here:`];
    for (const g of sorted) {
      out.push(`  ${g.kind} ${g.name}: ${g.why}; ${plural(g.files.size, 'file')}`, ...[...g.files].sort().map((file) => `    ${file}`));
      if (g.kind === 'tool') out.push(`    provide it: ${g.how}`);
    }
    const servers = sorted.filter((g) => g.kind === 'server').map((g) => g.name);
    out.push('');
    if (servers.length > 0) {
      out.push(
        'Start the servers and run again (the first start builds them into ~/.cache/muster-testenv):',
        `  npm run testenv -- up ${servers.join(' ')}`,
      );
    }
    if (sorted.some((g) => g.kind === 'tool'))
      out.push('Provide the tools as said above' + (servers.length ? ', then:' : ', and run again:'));
    out.push('  npm test', '');
    return out.join('\n') + '\n';
  }
}
