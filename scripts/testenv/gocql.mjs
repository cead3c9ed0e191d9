// The gocql steady-load program of the proxy's drain test (packages/cql-proxy/test/drivers/go),
// built once per source version into the testenv cache: gocql is the Go driver, and Go is what the
// testenv builds its servers with already.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { atomicDir, cacheDir, log, repoRoot, run } from './lib.mjs';

const source = join(repoRoot, 'packages/cql-proxy/test/drivers/go');

/** The path of the built program; builds it first if this source version was never built. */
export async function gocqlSteadyLoad() {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(source, file)));
  const dir = join(cacheDir(), `gocql-steady-load-${hash.digest('hex').slice(0, 12)}`);
  const bin = join(dir, 'steady-load');
  if (existsSync(bin)) return bin;
  log(`gocql steady-load: building into ${dir}`);
  await atomicDir(dir, async (tmp) => {
    await run('go', ['build', '-o', join(tmp, 'steady-load'), '.'], {
      cwd: source,
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' },
    });
  });
  return bin;
}
