#!/usr/bin/env node
// The packages as a user gets them: publint and arethetypeswrong on each, `npm pack` of each, the
// tarballs installed into an empty folder, `npx muster-cql-proxy --help` there, and (when the
// testenv Cassandra is up; required under CI=true) a static proxy from that folder that a driver
// queries. Run by .ci/run after `npm test`; `npm run check:packages` locally.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import cassandra from 'cassandra-driver';
import { freePort, repoRoot } from '../testenv/lib.mjs';
import { testServer } from '../testenv/state.mjs';

const packages = ['core', 'adapter-static', 'adapter-k8s', 'adapter-consul', 'cql-proxy', 'fence-cassandra'];
const started = Date.now();
const step = (what) => console.log(`[packages +${((Date.now() - started) / 1000).toFixed(1)}s] ${what}`);
const bin = (name) => join(repoRoot, 'node_modules', '.bin', name);
const run = (cmd, args, options = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', ...options });

function fail(message) {
  console.error(`check:packages: ${message}`);
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), 'muster-packages-'));
const cleanup = () => rmSync(work, { recursive: true, force: true });
process.on('exit', cleanup);

step('tsc -b');
run(bin('tsc'), ['-b'], { cwd: repoRoot, stdio: 'inherit' });

const tarballs = {};
for (const name of packages) {
  const dir = join(repoRoot, 'packages', name);
  step(`${name}: npm pack, publint, attw`);
  // One pack (its prepack builds), and both linters read that tarball: what would be published.
  const out = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], { cwd: dir }));
  const tarball = join(work, out[0].filename);
  run(bin('publint'), ['run', tarball, '--strict'], { stdio: 'inherit' });
  // ESM-only packages: CommonJS require() and node10 resolution are not supported, on purpose.
  run(bin('attw'), [tarball, '--profile', 'esm-only', '--format', 'table-flipped'], { stdio: 'inherit' });
  const files = out[0].files.map((f) => f.path);
  for (const needed of ['LICENSE', 'README.md', 'dist/index.js', 'dist/index.d.ts']) {
    if (!files.includes(needed)) fail(`${name}: the tarball lacks ${needed}`);
  }
  // Source maps point into ../src: the sources must ship with them.
  const maps = files.filter((f) => f.endsWith('.js.map'));
  const missing = maps.map((m) => m.replace(/^dist\//, 'src/').replace(/\.js\.map$/, '.ts')).filter((s) => !files.includes(s));
  if (missing.length > 0) fail(`${name}: source maps without their sources: ${missing.slice(0, 3).join(', ')}`);
  tarballs[name] = tarball;
}

// A user who runs the proxy on static membership installs core, the static adapter and the proxy;
// the Kubernetes and Consul adapters (optional peers) must not come along.
const app = join(work, 'app');
step('npm install the tarballs into an empty folder');
mkdirSync(app);
run('npm', ['init', '-y'], { cwd: app });
run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.core, tarballs['adapter-static'], tarballs['cql-proxy']], {
  cwd: app,
});
for (const absent of ['@muster/adapter-k8s', '@muster/adapter-consul', '@kubernetes/client-node']) {
  if (existsSync(join(app, 'node_modules', absent))) fail(`${absent} was installed although nothing asked for it`);
}

step('npx muster-cql-proxy --help');
const help = run('npx', ['--no-install', 'muster-cql-proxy', '--help'], { cwd: app });
if (!help.includes('Usage: muster-cql-proxy')) fail(`--help printed:\n${help}`);

step('a kubernetes config names the package to install');
writeFileSync(join(app, 'k8s.yaml'), 'discovery: { adapter: kubernetes }\nproxy: { backend: { contactPoints: [127.0.0.1:9042] } }\n');
try {
  run('npx', ['--no-install', 'muster-cql-proxy', '--check', '--config', 'k8s.yaml'], { cwd: app });
  fail('--check accepted kubernetes without @muster/adapter-k8s installed');
} catch (error) {
  if (!String(error.stderr).includes('npm install @muster/adapter-k8s')) fail(`unclear error without the k8s adapter:\n${error.stderr}`);
}

const backend = testServer('cassandra');
if (backend) await staticProxy(backend);
else step('no testenv cassandra: the static proxy run is skipped (npm run testenv -- up cassandra)');
step('done');

async function staticProxy(backend) {
  const port = await freePort();
  const http = await freePort();
  writeFileSync(
    join(app, 'proxy.yaml'),
    `discovery:
  adapter: static
  options: { members: [{ id: proxy-0, address: 127.0.0.1, port: ${port} }], self: proxy-0 }
proxy:
  listen: { host: 127.0.0.1, port: ${port} }
  http: { host: 127.0.0.1, port: ${http} }
  backend: { contactPoints: [${backend.contactPoints.join(', ')}] }
`,
  );
  step(`a static proxy from the installed package on 127.0.0.1:${port}`);
  // The bin npx resolved above, run directly so that SIGTERM reaches the proxy itself.
  const child = spawn(join(app, 'node_modules', '.bin', 'muster-cql-proxy'), ['--config', 'proxy.yaml'], {
    cwd: app,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const client = new cassandra.Client({ contactPoints: [`127.0.0.1:${port}`], localDataCenter: backend.localDataCenter });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`http://127.0.0.1:${http}/health/readiness`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (child.exitCode !== null) fail(`the proxy exited (${child.exitCode}):\n${output}`);
      if (Date.now() > deadline) fail(`the proxy was not ready within 60 s:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await client.connect();
    const { rows } = await client.execute('SELECT release_version FROM system.local');
    step(`a driver queried through it: release_version ${rows[0]?.release_version}`);
  } finally {
    await client.shutdown().catch(() => undefined);
    child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) fail(`the proxy exited with ${code} after SIGTERM:\n${output}`);
  }
}
