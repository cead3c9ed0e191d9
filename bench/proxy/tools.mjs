// The Go programs of the benchmark, each built once per source version into the testenv cache
// (~/.cache/muster-testenv, as the test servers and the gocql steady-load tool are): the load
// generator from ./load, and datastax/cql-proxy from its Go module through the Go module proxy
// (./cql-proxy holds the wrapper go.mod that pins it; `go.sum` makes the build reproducible).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { atomicDir, cacheDir, log, run } from '../../scripts/testenv/lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const goEnv = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=readonly' };

/** The bench's gocql load generator, built when this source version was never built. */
export async function cqlLoad() {
  const source = join(here, 'load');
  const hash = createHash('sha256');
  for (const file of ['go.mod', 'go.sum', 'main.go', 'hop.go']) hash.update(readFileSync(join(source, file)));
  const dir = join(cacheDir(), `bench-cql-load-${hash.digest('hex').slice(0, 12)}`);
  const bin = join(dir, 'cql-load');
  if (existsSync(bin)) return bin;
  log(`bench cql-load: building into ${dir}`);
  await atomicDir(dir, (tmp) => run('go', ['build', '-o', join(tmp, 'cql-load'), '.'], { cwd: source, env: goEnv }));
  return bin;
}

/** The version of github.com/datastax/cql-proxy that ./cql-proxy/go.mod pins. */
export function datastaxCqlProxyVersion() {
  const mod = readFileSync(join(here, 'cql-proxy/go.mod'), 'utf8');
  const version = /github\.com\/datastax\/cql-proxy (v\S+)/.exec(mod)?.[1];
  if (!version) throw new Error('bench/proxy/cql-proxy/go.mod: no github.com/datastax/cql-proxy requirement');
  return version;
}

/** datastax/cql-proxy's binary, built from its Go module on first use (about a minute on 2 cores). */
export async function datastaxCqlProxy() {
  const version = datastaxCqlProxyVersion();
  const dir = join(cacheDir(), `datastax-cql-proxy-${version}`);
  const bin = join(dir, 'cql-proxy');
  if (existsSync(bin)) return bin;
  log(`datastax/cql-proxy ${version}: building into ${dir}`);
  await atomicDir(dir, (tmp) =>
    run('go', ['build', '-o', join(tmp, 'cql-proxy'), 'github.com/datastax/cql-proxy'], { cwd: join(here, 'cql-proxy'), env: goEnv }),
  );
  return bin;
}
