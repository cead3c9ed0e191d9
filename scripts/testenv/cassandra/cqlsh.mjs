// cqlsh from PyPI (packaged from Cassandra 5.0's own cqlsh), installed on demand into the testenv
// cache: `pip install --target` into site/ plus a small launcher, so the folder still works after
// atomicDir renames it into place (a venv would not: its scripts hard-code their own path).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { atomicDir, cacheDir, log, run } from '../lib.mjs';

export const CQLSH_VERSION = '6.2.2';
// The Python driver cqlsh runs on; pinned so a cached cqlsh is the same one everywhere.
const PY_DRIVER_VERSION = '3.30.1';

/** Absolute path of a cqlsh launcher (`cqlsh HOST PORT [-u USER -p PASS] -e CQL`); installs it first if needed. */
export async function cqlshPath() {
  const python = process.env.MUSTER_PYTHON || 'python3';
  const dir = join(cacheDir(), `cqlsh-${CQLSH_VERSION}`);
  const launcher = join(dir, 'bin', 'cqlsh');
  if (existsSync(launcher)) return launcher;
  // The interpreter that pip installs for (its compiled driver modules are built for that version).
  const interpreter = execFileSync(python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  const started = Date.now();
  log(`cqlsh ${CQLSH_VERSION}: pip install into ${dir}`);
  try {
    await atomicDir(dir, async (tmp) => {
      await run(
        interpreter,
        [
          '-m',
          'pip',
          'install',
          '--quiet',
          '--disable-pip-version-check',
          '--no-input',
          '--target',
          join(tmp, 'site'),
          `cqlsh==${CQLSH_VERSION}`,
          `cassandra-driver==${PY_DRIVER_VERSION}`,
        ],
        { cwd: tmp, env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' } },
      );
      mkdirSync(join(tmp, 'bin'));
      const script = join(tmp, 'bin', 'cqlsh');
      writeFileSync(
        script,
        [
          '#!/bin/sh',
          `# cqlsh ${CQLSH_VERSION} for the Muster test servers (scripts/testenv/cassandra/cqlsh.mjs).`,
          'site="$(cd "$(dirname "$0")/../site" && pwd)"',
          'PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}" PYTHONNOUSERSITE=1 \\',
          `  exec '${interpreter.replaceAll("'", `'\\''`)}' -m cqlshlib "$@"`,
          '',
        ].join('\n'),
      );
      chmodSync(script, 0o755);
      await run(script, ['--version'], { quiet: true });
    });
  } catch (err) {
    // A concurrent install may have put it in place first.
    if (!existsSync(launcher)) throw err;
  }
  log(`cqlsh ${CQLSH_VERSION}: installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return launcher;
}
