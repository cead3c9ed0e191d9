// Serverless handler: cold start (a fresh process to the first result) and bundle size, with the
// static adapter and — when the testenv Consul agent is up — the Consul adapter; unbundled (the
// workspace's compiled dist and node_modules) and as an esbuild bundle run from a folder with no
// node_modules. Also checks that no bundle that does not select Kubernetes carries its client.
// Prints figures; asserts nothing. Needs `npx tsc -b` first. RUNS=9 by default.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle, mentions } from './bundle.mjs';
import { readState } from '../../scripts/testenv/state.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const runs = Number(process.env.RUNS ?? 9);
const unbundled = join(root, 'examples/serverless/dist/handler.js');
const consul = readState().consul;

// Consul: two instances of `orders` to list, registered before and removed after.
async function agent(method, path, body) {
  const res = await fetch(`${consul.url}${path}`, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}
const ordersIds = ['orders-bench-0', 'orders-bench-1'];

const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
const bundles = {};
console.log(
  `serverless bench, node ${process.version}, ${execFileSync('nproc').toString().trim()} cores, esbuild ${(await import('esbuild')).version}`,
);
console.log('\nbundle sizes (minified ESM, code-split; startup = what a first invocation loads)');
for (const adapter of ['static', ...(consul ? ['consul'] : []), 'kubernetes']) {
  const b = await bundle(adapter);
  bundles[adapter] = b;
  const total = b.files.reduce((a, f) => a + f.size, 0);
  const gz = b.files.reduce((a, f) => a + f.gzip, 0);
  const start = b.files.filter((f) => b.startup.includes(f.name)).reduce((a, f) => a + f.size, 0);
  const k8s = mentions(b.inputs, '@kubernetes/client-node').length;
  console.log(
    `  ${(adapter + (adapter === 'kubernetes' ? ' (control)' : '')).padEnd(22)} total ${kb(total).padStart(10)}  gzip ${kb(gz).padStart(9)}  startup ${kb(start).padStart(10)}  files ${b.files.length}  ` +
      `@kubernetes/client-node: ${k8s ? `IN (${k8s} modules)` : 'absent'}; adapter-k8s: ${mentions(b.inputs, 'adapter-k8s').length ? 'in' : 'absent'}`,
  );
}

// Configs: the built-in one (MUSTER_ADAPTER) for static; a YAML file for Consul.
const consulYaml = (dir, adapter) => {
  const file = join(dir, 'muster.yaml');
  const options = `{ address: "${consul.address}", minSessionTtl: 1s, lockDelay: 0s, keyPrefix: "serverless-bench/" }`;
  writeFileSync(
    file,
    `version: 1\ndiscovery: { adapter: ${adapter}, options: ${options} }\nlock: { adapter: ${adapter}, options: ${options} }\n`,
  );
  return file;
};
const cases = {
  'bare node': { args: ['-e', 'console.log(1)'] },
  'static, unbundled': { args: [join(here, 'invoke.mjs'), unbundled], env: { MUSTER_ADAPTER: 'static' } },
  'static, bundle': {
    args: [join(here, 'invoke.mjs'), join(bundles.static.outdir, 'handler.mjs')],
    env: { MUSTER_ADAPTER: './adapter-static.mjs' },
  },
};
if (consul) {
  cases['consul, unbundled'] = {
    args: [join(here, 'invoke.mjs'), unbundled],
    env: { MUSTER_CONFIG: consulYaml(mkdir('unbundled'), 'consul') },
  };
  cases['consul, bundle'] = {
    args: [join(here, 'invoke.mjs'), join(bundles.consul.outdir, 'handler.mjs')],
    env: { MUSTER_CONFIG: consulYaml(bundles.consul.outdir, './adapter-consul.mjs') },
  };
  for (const [i, id] of ordersIds.entries())
    await agent('PUT', '/v1/agent/service/register', { ID: id, Name: 'orders', Address: '127.0.0.1', Port: 8080 + i });
} else {
  console.log('\n(consul: skipped — the testenv agent is not up; start it with npm run testenv -- up consul)');
}

function mkdir(name) {
  const dir = join(bundles.static.outdir, '..', `muster-serverless-${name}-${process.pid}`);
  execFileSync('mkdir', ['-p', dir]);
  return dir;
}

/** Spawn to the first line on stdout, in ms; also returns that line. */
function once({ args, env = {} }) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let ms;
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      if (ms === undefined) ms = Number(process.hrtime.bigint() - started) / 1e6;
      out += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk));
    child.on('exit', (code) =>
      code === 0 ? resolve({ ms, line: out.split('\n')[0] }) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

try {
  const timings = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const sample = {};
  for (let i = 0; i < runs; i++) {
    for (const [name, c] of Object.entries(cases)) {
      const { ms, line } = await once(c);
      timings[name].push(ms);
      sample[name] = line;
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const bare = median(timings['bare node']);
  console.log(`\ncold start: fresh process to the first result, ${runs} runs each, interleaved`);
  console.log(`  ${'case'.padEnd(22)} ${'median ms'.padStart(10)} ${'min ms'.padStart(8)} ${'over bare'.padStart(10)}  result`);
  for (const [name, xs] of Object.entries(timings)) {
    const m = median(xs);
    const over = name === 'bare node' ? '' : `+${(m - bare).toFixed(1)}`;
    console.log(
      `  ${name.padEnd(22)} ${m.toFixed(1).padStart(10)} ${Math.min(...xs)
        .toFixed(1)
        .padStart(8)} ${over.padStart(10)}  ${name === 'bare node' ? '' : sample[name]}`,
    );
  }
  console.log('\ncompare: bench/cold-start (core alone, static list) — goal there ≤ +50 ms over bare node for a config object');
} finally {
  if (consul) for (const id of ordersIds) await agent('PUT', `/v1/agent/service/deregister/${id}`).catch(() => undefined);
}
