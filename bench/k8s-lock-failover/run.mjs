// Lease lock failover after SIGKILL of the holder, against the testenv kube-apiserver
// (`npm run testenv -- up k8s`). Prints, never asserts. Unlike a contender that starts at the kill,
// the waiter here is already waiting (polling) when the holder dies, as in production, so the lag in
// seeing the holder's last renewal is included. The kill comes at a random phase of the renew
// cycle (seeded: SEED=<n> replays a run).
// Build first (npx tsc -b): this imports the packages' dist output, as an application would.
//   node bench/k8s-lock-failover/run.mjs        RUNS=10 TTL=3000 SEED=<random>
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { readState } from '../../scripts/testenv/state.mjs';

const RUNS = Number(process.env.RUNS ?? 10);
const TTL = Number(process.env.TTL ?? 3000);
const SEED = Number(process.env.SEED ?? Math.floor(Math.random() * 2 ** 31));
const entry = readState().k8s;
const kubeconfig = process.env.KUBECONFIG ?? entry?.kubeconfig;
if (!kubeconfig) {
  console.error('k8s-lock-failover bench: no API server; start it with: npm run testenv -- up k8s (or set KUBECONFIG)');
  process.exit(1);
}
const { createMuster } = await import('@muster/core');

/** mulberry32: a small seeded generator, so a run's kill phases can be replayed. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(0);
  return `n=${s.length} min=${s[0].toFixed(0)} p50=${q(0.5)} p90=${q(0.9)} max=${s.at(-1).toFixed(0)} ms`;
}

const next = random(SEED);
const name = `bench-failover-${Date.now().toString(36)}`;
const contender = await createMuster({ lock: { adapter: 'kubernetes', options: { kubeconfig, namespace: 'default' } } });
const failovers = [];
for (let run = 0; run < RUNS; run++) {
  const holder = fork(fileURLToPath(new URL('./holder.mjs', import.meta.url)), [], {
    env: { ...process.env, KUBECONFIG: kubeconfig, LOCK_NAME: name, TTL: String(TTL) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const held = await new Promise((resolve, reject) => {
    holder.once('message', resolve);
    holder.once('exit', (code) => reject(new Error(`holder exited with ${code} before acquiring`)));
  });
  const waiting = contender.lock.acquire(name, { ttl: TTL, wait: 120_000 });
  // The waiter polls while the holder renews; the kill lands at a random phase of both cycles.
  await new Promise((r) => setTimeout(r, TTL + next() * TTL));
  const killed = performance.now();
  holder.kill('SIGKILL');
  const lease = await waiting;
  failovers.push(performance.now() - killed);
  if (!(lease.token > BigInt(held.token))) throw new Error(`token did not increase: ${held.token} → ${lease.token}`);
  await lease.release();
}
await contender.close();
const retry = (TTL * 2) / 15;
console.log(`Lease lock failover after SIGKILL (ttl ${TTL} ms, retry period ${retry.toFixed(0)} ms, seed ${SEED}): ${summary(failovers)}`);
console.log(`  bound: ttl + 1 retry period after the holder's last renewal = ${(TTL + retry).toFixed(0)} ms at most after the kill`);
