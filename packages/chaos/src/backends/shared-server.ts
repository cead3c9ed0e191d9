import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError } from '@muster/core';

/** A server the testenv runs for everyone (MUSTER_TESTENV_DIR, else the repo's .testenv): never restarted by chaos. */
export function sharedServer<E>(name: string): E {
  const dir = process.env.MUSTER_TESTENV_DIR ?? join(process.cwd(), '.testenv');
  const file = join(dir, 'state.json');
  let state: Record<string, E>;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as Record<string, E>;
  } catch (cause) {
    throw new InvalidArgumentError(
      `--shared: cannot read ${file} (${(cause as Error).message}); start it with npm run testenv -- up ${name}`,
    );
  }
  const entry = state[name];
  if (!entry) throw new InvalidArgumentError(`--shared: ${file} has no '${name}' server; start it with npm run testenv -- up ${name}`);
  return entry;
}
