// The Apache gocql v2 check program of the proxy's ring-driver test
// (packages/cql-proxy/test/drivers/gocql2, github.com/apache/cassandra-gocql-driver/v2 from the Go
// module proxy), built once per source version into the testenv cache. One small module: the first
// build downloads it and compiles in about a minute, so it is built on first use, in CI too.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { atomicDir, cacheDir, log, repoRoot, run } from './lib.mjs';

const source = join(repoRoot, 'packages/cql-proxy/test/drivers/gocql2');

/** The module version the check program pins (go.mod), to name it in test output. */
export const GOCQL2_VERSION = /cassandra-gocql-driver\/v2 (v\S+)/.exec(readFileSync(join(source, 'go.mod'), 'utf8'))?.[1] ?? 'unknown';

/** The path of the built program; builds it first if this source version was never built. */
export async function gocql2Check() {
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(source, file)));
  const dir = join(cacheDir(), `gocql2-check-${hash.digest('hex').slice(0, 12)}`);
  const bin = join(dir, 'gocql2-check');
  if (existsSync(bin)) return bin;
  log(`gocql v2 check: building into ${dir}`);
  await atomicDir(dir, async (tmp) => {
    await run('go', ['build', '-o', join(tmp, 'gocql2-check'), '.'], {
      cwd: source,
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' },
    });
  });
  return bin;
}
