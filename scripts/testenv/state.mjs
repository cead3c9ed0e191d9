// The state file that `testenv up` writes and the integration tests read.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runDir } from './lib.mjs';
import { skipFor } from './skips.mjs';

export function stateFile() {
  return join(runDir(), 'state.json');
}

export function readState() {
  const file = stateFile();
  if (!existsSync(file)) return {};
  return JSON.parse(readFileSync(file, 'utf8'));
}

function writeState(state) {
  const file = stateFile();
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n');
  renameSync(tmp, file);
}

export function putEntry(name, entry) {
  writeState({ ...readState(), [name]: entry });
}

export function dropEntry(name) {
  const { [name]: _gone, ...rest } = readState();
  writeState(rest);
}

/**
 * The running server `name` for an integration test, or undefined when it is not up.
 * Locally a missing server is skipped loudly; under CI=true it is an error, never a silent skip.
 */
export function testServer(name) {
  const entry = readState()[name];
  if (entry) return entry;
  return skipFor({ kind: 'server', name, why: `not running (no entry in ${stateFile()})`, how: `npm run testenv -- up ${name}` });
}
