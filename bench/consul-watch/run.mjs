// Consul adapter timings against the testenv agent (`npm run testenv -- up consul`). Prints, never asserts:
//   1. health change → watch() consumer: a TTL check is failed/passed by HTTP; time from sending
//      the change to the `updated` event reaching the consumer (ROUNDS flips; p50/p90/p99/max).
//   2. lock failover after SIGKILL: a holder child process acquires the lock and is killed; time from
//      the kill to a waiting contender's acquire (RUNS runs), with the ttl and lock-delay in use.
// Build first (npx tsc -b): this imports the packages' dist output, as an application would.
//   node bench/consul-watch/run.mjs            ROUNDS=200 RUNS=20 TTL=2000 LOCK_DELAY=0
import { fork } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { readState } from '../../scripts/testenv/state.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 200);
const RUNS = Number(process.env.RUNS ?? 20);
const TTL = Number(process.env.TTL ?? 2000);
const LOCK_DELAY = Number(process.env.LOCK_DELAY ?? 0);
const entry = readState().consul;
const address = process.env.CONSUL_HTTP_ADDR ?? entry?.address;
if (!address) {
  console.error('consul-watch bench: no agent; start it with: npm run testenv -- up consul (or set CONSUL_HTTP_ADDR)');
  process.exit(1);
}
const url = `http://${address}`;
const { createMuster } = await import('@muster/core');
const common = { address, minSessionTtl: '1s', lockDelay: LOCK_DELAY, watchWait: '60s' };

function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(1);
  return `n=${s.length} p50=${q(0.5)} p90=${q(0.9)} p99=${q(0.99)} min=${s[0].toFixed(1)} max=${s.at(-1).toFixed(1)} ms`;
}

async function api(path) {
  const res = await fetch(`${url}${path}`, { method: 'PUT' });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
}

// 1. Watch latency: back to back (the next change lands while the watch is inside its rate-limit
// pause) and spaced (the watch is parked in a blocking query when the change lands, the usual case).
async function watchLatency(label, gapMs, extra = {}) {
  const service = `muster-bench-${Date.now().toString(36)}`;
  const id = `${service}-1`;
  const register = await fetch(`${url}/v1/agent/service/register`, {
    method: 'PUT',
    body: JSON.stringify({ Name: service, ID: id, Port: 9042, Check: { TTL: '10m', Status: 'passing' } }),
  });
  if (!register.ok) throw new Error(`register: ${register.status}`);
  const muster = await createMuster({ discovery: { adapter: 'consul', options: { ...common, ...extra } } });
  const watch = muster.discovery.watch(service)[Symbol.asyncIterator]();
  await watch.next(); // snapshot
  const latencies = [];
  let ready = true;
  for (let i = 0; i < ROUNDS; i++) {
    if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
    ready = !ready;
    const sent = performance.now();
    await api(`/v1/agent/check/${ready ? 'pass' : 'fail'}/service:${id}`);
    for (;;) {
      const { value } = await watch.next();
      if (value.type === 'updated' && value.endpoint.ready === ready) break;
    }
    latencies.push(performance.now() - sent);
  }
  await watch.return();
  await muster.close();
  await api(`/v1/agent/service/deregister/${id}`);
  console.log(`health change → watch() consumer, ${label}: ${summary(latencies)}`);
}
if (ROUNDS > 0) {
  await watchLatency('spaced 250 ms, minWatchInterval 100 ms (default)', 250);
  await watchLatency('back to back, minWatchInterval 100 ms (default)', 0);
  await watchLatency('back to back, minWatchInterval 0', 0, { minWatchInterval: 0 });
}

// 2. Lock failover after SIGKILL of the holder process.
if (RUNS > 0) {
  const name = `bench-failover-${Date.now().toString(36)}`;
  const contender = await createMuster({ lock: { adapter: 'consul', options: common } });
  const failovers = [];
  for (let run = 0; run < RUNS; run++) {
    const holder = fork(fileURLToPath(new URL('./holder.mjs', import.meta.url)), [], {
      env: { ...process.env, CONSUL_HTTP_ADDR: address, LOCK_NAME: name, TTL: String(TTL), LOCK_DELAY: String(LOCK_DELAY) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const held = await new Promise((resolve, reject) => {
      holder.once('message', resolve);
      holder.once('exit', (code) => reject(new Error(`holder exited with ${code} before acquiring`)));
    });
    // Let a renewal or two happen, as a real holder would have, at a random phase of the renew cycle.
    await new Promise((r) => setTimeout(r, TTL / 2 + Math.random() * TTL));
    const waiting = contender.lock.acquire(name, { ttl: TTL, wait: 120_000 });
    const killed = performance.now();
    holder.kill('SIGKILL');
    const lease = await waiting;
    failovers.push(performance.now() - killed);
    if (!(lease.token > BigInt(held.token))) throw new Error(`token did not increase: ${held.token} → ${lease.token}`);
    await lease.release();
  }
  await contender.close();
  console.log(`lock failover after SIGKILL (ttl ${TTL} ms, lock-delay ${LOCK_DELAY} ms, ${RUNS} runs): ${summary(failovers)}`);
  console.log(
    `  expected: Consul invalidates a session 2 × ttl after its last renewal (renewed every ttl/3), then lock-delay; Consul's default lock-delay of 15 s would add 15000 ms`,
  );
}
