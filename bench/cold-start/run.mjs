// Cold start: a fresh process, to the first list() result, against bare `node -e 0` in the same
// run. Median (and min) of N runs each, interleaved so machine load affects all cases alike.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readState } from '../../scripts/testenv/state.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const runs = Number(process.env.RUNS ?? 9);
const yamlFile = join(mkdtempSync(join(tmpdir(), 'muster-bench-')), 'muster.yaml');
writeFileSync(
  yamlFile,
  `discovery:
  adapter: static
  options:
    members:
      - { id: a, address: 127.0.0.1, port: 9042 }
      - { id: b, address: 127.0.0.2, port: 9042 }
    self: a
`,
);

const cases = {
  'bare node -e 0': ['-e', '0'],
  'static, config object': [join(here, 'first-list.mjs'), 'object'],
  'static, YAML file': [join(here, 'first-list.mjs'), 'yaml'],
};
// With the k8s testenv up, the kubernetes adapter joins, against a plain import of the client it
// avoids loading (the reference point).
const k8s = readState().k8s;
if (k8s) {
  process.env.K8S_KUBECONFIG = k8s.kubeconfig;
  cases['kubernetes, first list()'] = [join(here, '../k8s-watch/first-list.mjs')];
  cases["import('@kubernetes/client-node')"] = ['--input-type=module', '-e', "await import('@kubernetes/client-node')"];
}
for (const extra of (process.env.BENCH_EXTRA ?? '').split(',').filter(Boolean)) {
  const [name, ...args] = extra.split(' ');
  cases[name] = args;
}

const timings = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let i = 0; i < runs; i++) {
  for (const [name, args] of Object.entries(cases)) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, {
      cwd: here,
      env: { ...process.env, MUSTER_BENCH_FILE: yamlFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
    timings[name].push(ms);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const bare = median(timings['bare node -e 0']);
console.log(`cold start, ${runs} runs each, node ${process.version}, ${execFileSync('nproc').toString().trim()} cores`);
console.log('case'.padEnd(32), 'median ms'.padStart(10), 'min ms'.padStart(8), 'over bare'.padStart(10));
for (const [name, xs] of Object.entries(timings)) {
  const m = median(xs);
  console.log(
    name.padEnd(32),
    m.toFixed(1).padStart(10),
    Math.min(...xs)
      .toFixed(1)
      .padStart(8),
    (name.startsWith('bare') ? '' : `+${(m - bare).toFixed(1)}`).padStart(10),
  );
}
console.log('goals: config object ≤ +50 ms, YAML file ≤ +90 ms, kubernetes ≤ +150 ms over bare node');
