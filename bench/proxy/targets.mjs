// The targets of one bench run: Cassandra itself, the Muster proxy and datastax/cql-proxy, each a
// { name, hosts, pid?, listenPort?, stop() } the load generator is pointed at.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/testenv/lib.mjs';
import { pinnedCommand } from './pinning.mjs';
import { routedExecutes } from './routing.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, check, child, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what}: exited with ${child.exitCode} before it was ready`);
    if (await check()) return;
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`${what}: not ready after ${timeoutMs} ms`);
}

const accepts = (port) =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

function stopper(child) {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    });
}

/** Cassandra itself; `direct-rr` is the same with the driver's token awareness off (round robin). */
export function directTarget(cassandra, name) {
  return { name, hosts: cassandra.contactPoints, tokenAware: name === 'direct-rr' ? false : undefined, stop: async () => {} };
}

/**
 * Asks the event-loop probe preloaded into `child` (loop-probe.cjs) over its IPC channel: `reset`
 * when a window opens, `report()` resolves its figures when it closes.
 */
function loopProbe(child) {
  return {
    reset: () => child.send('reset'),
    report: () =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve(undefined), 5000);
        child.once('message', (figures) => (clearTimeout(timer), resolve(figures)));
        child.send('report');
      }),
  };
}

/**
 * The Muster proxy (dist/ of this checkout, or of `checkout`), one instance with static membership; with
 * `loopDelay` it carries the event-loop probe (target.probe).
 */
export async function startMuster(
  cassandra,
  cpus,
  {
    nodeArgs = process.env.PROXY_NODE_ARGS ?? '',
    env = process.env,
    loopDelay = false,
    nice = 0,
    checkout = join(here, '../..'),
    name = 'muster',
  } = {},
) {
  const [port, http] = [await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'muster-bench-proxy-'));
  const config = join(dir, 'proxy.yaml');
  writeFileSync(
    config,
    `discovery:
  adapter: static
  options: { service: muster-cql-proxy, members: [{ id: bench-0, address: 127.0.0.1, port: ${port} }], self: bench-0 }
heartbeat: { adapter: static }
proxy:
  listen: { host: 127.0.0.1, port: ${port} }
  http: { host: 127.0.0.1, port: ${http} }
  backend: { contactPoints: [${cassandra.contactPoints.join(', ')}] }
  log: { level: warn }
`,
  );
  // PROXY_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the proxy under this load.
  const flags = nodeArgs.split(' ').filter(Boolean);
  if (loopDelay) flags.push('--require', join(here, 'loop-probe.cjs'));
  const cli = join(checkout, 'packages/cql-proxy/dist/cli.js');
  const [cmd, ...args] = pinnedCommand([process.execPath, ...flags, cli, '--config', config], cpus, nice);
  // taskset execs node in place, so the IPC channel's descriptor reaches the proxy.
  const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit', ...(loopDelay ? ['ipc'] : [])], env });
  const ready = () =>
    fetch(`http://127.0.0.1:${http}/health/readiness`).then(
      (r) => r.ok,
      () => false,
    );
  await until('muster-cql-proxy', ready, child);
  const stop = stopper(child);
  return {
    name,
    hosts: [`127.0.0.1:${port}`],
    pid: child.pid,
    listenPort: port,
    ...(loopDelay ? { probe: loopProbe(child) } : {}),
    routed: () =>
      fetch(`http://127.0.0.1:${http}/metrics`).then(
        (r) => r.text().then(routedExecutes),
        () => undefined,
      ),
    stop: () => stop().then(() => rmSync(dir, { recursive: true, force: true })),
    kill: () => child.kill(),
  };
}

/** datastax/cql-proxy with its defaults (one connection per backend node, protocol v4). */
export async function startCqlProxy(bin, cassandra, cpus, nice = 0) {
  const port = await freePort();
  const http = await freePort();
  const hosts = cassandra.contactPoints.map((hp) => hp.replace(/:\d+$/, ''));
  const argv = [bin, '--contact-points', hosts.join(','), '--port', String(cassandra.nativePort)];
  argv.push('--bind', `127.0.0.1:${port}`, '--http-bind', `127.0.0.1:${http}`);
  const [cmd, ...args] = pinnedCommand(argv, cpus, nice);
  // Its zap log (one info line per start) would interleave with the figures.
  const child = spawn(cmd, args, { stdio: 'ignore' });
  await until('datastax/cql-proxy', () => accepts(port), child);
  return {
    name: 'cql-proxy',
    hosts: [`127.0.0.1:${port}`],
    pid: child.pid,
    listenPort: port,
    stop: stopper(child),
    kill: () => child.kill(),
  };
}

/**
 * The echo process of the hop measurement (load/hop.go), on the proxy's core: the load generator's
 * round trips to it are one loopback hop with nothing done in between.
 */
export async function startEcho(bin, cpus, nice = 0) {
  const port = await freePort();
  const [cmd, ...args] = pinnedCommand([bin, '-echo', `127.0.0.1:${port}`], cpus, nice);
  const child = spawn(cmd, args, { stdio: 'ignore' });
  await until('cql-load -echo', () => accepts(port), child);
  return { name: 'hop', hosts: [`127.0.0.1:${port}`], stop: stopper(child), kill: () => child.kill() };
}
