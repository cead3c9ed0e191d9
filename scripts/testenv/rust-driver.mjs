// The Rust `scylla` driver's check program (packages/cql-proxy/test/drivers/rust), built once per
// source version into the testenv cache. Its first build compiles about 110 crates (tokio, the
// driver): minutes on an idle machine, 20 on a busy 2-core one, so a test builds it only when asked
// (MUSTER_RUST_DRIVER=build) and otherwise runs the cached binary or skips saying how to build it.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { atomicDir, cacheDir, log, repoRoot, run } from './lib.mjs';

const source = join(repoRoot, 'packages/cql-proxy/test/drivers/rust');
const FILES = ['Cargo.toml', 'Cargo.lock', 'src/main.rs'];

/** Where this source version's binary is (or would be) cached. */
export function rustDriverCheckPath() {
  const hash = createHash('sha256');
  for (const file of FILES) hash.update(readFileSync(join(source, file)));
  return join(cacheDir(), `rust-scylla-check-${hash.digest('hex').slice(0, 12)}`, 'muster-scylla-check');
}

/** The path of the built program; builds it first (cargo, crates.io) if this source version was never built. */
export async function rustDriverCheck() {
  const bin = rustDriverCheckPath();
  if (existsSync(bin)) return bin;
  const dir = join(bin, '..');
  log(`rust scylla driver check: building into ${dir} (the first build takes minutes)`);
  // One target dir for every source version: a change to main.rs recompiles main.rs only.
  const target = cacheDir('cql-driver-rust-target');
  await atomicDir(dir, async (tmp) => {
    await run('cargo', ['build', '--locked', '--quiet'], { cwd: source, env: { ...process.env, CARGO_TARGET_DIR: target } });
    copyFileSync(join(target, 'debug', 'muster-scylla-check'), join(tmp, 'muster-scylla-check'));
  });
  return bin;
}
