// Shared by servers/consul.mjs, consul-acl.mjs and consul-persist.mjs: builds Consul from the
// wrapper module beside this file and runs it on free loopback ports, as a dev agent (state in
// memory: every restart loses it) or as a single server agent keeping its state in a data dir.
//
// Consul is built from source because it is the last release line under MPL-2.0 that builds here:
// 1.17+ is BSL, and 1.15/1.16 need nested modules that this project does not use.
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import { atomicDir, cacheDir, freePort, isAlive, log, run, runDir, spawnDaemon, stopProcess, waitFor } from '../lib.mjs';

export const CONSUL_VERSION = '1.14.11';
const CONSUL_MODULE = 'github.com/hashicorp/consul';
const moduleDir = dirname(fileURLToPath(import.meta.url));
const DATACENTER = 'dc1';

/** The folder the built binary lives in; computed without creating it (atomicDir must do that). */
function binDir() {
  return join(cacheDir(), `consul-v${CONSUL_VERSION}`);
}

export function consulBinary() {
  return join(binDir(), 'consul');
}

function goEnv() {
  return { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=readonly`.trim() };
}

function capture(cmd, args, { cwd, env } = {}) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolveRun(out.trim()) : reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}`))));
  });
}

/** Refuses to build anything but the pinned, MPL-2.0 licensed Consul. */
async function checkLicence() {
  const info = JSON.parse(await capture('go', ['list', '-m', '-json', CONSUL_MODULE], { cwd: moduleDir, env: goEnv() }));
  if (info.Version !== `v${CONSUL_VERSION}`) {
    throw new Error(`wrapper module resolves ${CONSUL_MODULE}@${info.Version}, expected v${CONSUL_VERSION}`);
  }
  if (!info.Dir) await run('go', ['mod', 'download', CONSUL_MODULE], { cwd: moduleDir, env: goEnv() });
  const dir = info.Dir || JSON.parse(await capture('go', ['list', '-m', '-json', CONSUL_MODULE], { cwd: moduleDir, env: goEnv() })).Dir;
  const licence = readFileSync(join(dir, 'LICENSE'), 'utf8');
  if (!/Mozilla Public License,? version 2\.0/i.test(licence) || /Business Source License/i.test(licence)) {
    throw new Error(`${dir}/LICENSE is not MPL-2.0; refusing to build`);
  }
  return info;
}

/**
 * Holds an exclusive lock file while `fn` runs, so two `testenv up` runs (say `up all` from two
 * shells) do not both spend the long cold build; a lock left by a dead process is taken over.
 */
async function withBuildLock(fn) {
  const lock = join(cacheDir(), `consul-v${CONSUL_VERSION}.lock`);
  for (let warned = false; ;) {
    try {
      const fd = openSync(lock, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lock, 'utf8')) || 0;
      if (!holder || !isAlive(holder)) {
        rmSync(lock, { force: true });
        continue;
      }
      if (!warned) log(`waiting for process ${holder}, which is building consul v${CONSUL_VERSION}`);
      warned = true;
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Builds the consul binary into the cache once; later calls return at once. */
export async function buildConsul() {
  const bin = consulBinary();
  if (existsSync(bin)) return bin;
  return withBuildLock(async () => {
    if (existsSync(bin)) return bin; // built by the process we waited for
    rmSync(binDir(), { recursive: true, force: true }); // a folder without its binary is not a cache entry
    const started = Date.now();
    log(`building consul v${CONSUL_VERSION} from ${moduleDir} (cold: several minutes)`);
    const info = await checkLicence();
    await atomicDir(binDir(), async (tmp) => {
      const ldflags = [
        '-s',
        '-w',
        `-X ${CONSUL_MODULE}/version.GitCommit=v${CONSUL_VERSION}`,
        `-X ${CONSUL_MODULE}/version.BuildDate=${info.Time}`,
      ].join(' ');
      await run('go', ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', join(tmp, 'consul'), CONSUL_MODULE], {
        cwd: moduleDir,
        env: goEnv(),
      });
      const reported = await capture(join(tmp, 'consul'), ['version']);
      if (!reported.includes(`v${CONSUL_VERSION}`)) throw new Error(`built consul reports '${reported}'`);
      writeFileSync(join(tmp, 'BUILDINFO'), `${CONSUL_MODULE}@v${CONSUL_VERSION} (MPL-2.0)\n${reported}\n`);
    });
    log(`consul v${CONSUL_VERSION} built in ${((Date.now() - started) / 1000).toFixed(0)} s: ${bin}`);
    return bin;
  });
}

function hcl(value) {
  return JSON.stringify(value); // an HCL string literal is a JSON string literal
}

function agentConfig({ acl, managementToken, persist }) {
  const lines = [`datacenter = ${hcl(DATACENTER)}`, 'disable_update_check = true', 'session_ttl_min = "1s"'];
  if (persist) {
    // A one-server cluster that keeps its Raft log and snapshots in the data dir, so a restart is
    // an ordinary restart (sessions, KV and indexes survive), unlike -dev. raft_multiplier 1 is the
    // production tuning: it elects the lone server in about a second instead of five.
    lines.push('server = true', 'bootstrap_expect = 1', 'performance {', '  raft_multiplier = 1', '}');
  }
  if (acl) {
    lines.push(
      'acl {',
      '  enabled = true',
      '  default_policy = "deny"',
      '  down_policy = "extend-cache"',
      '  enable_token_persistence = false',
      '  tokens {',
      `    initial_management = ${hcl(managementToken)}`,
      // The agent registers its own node and runs anti-entropy with this token.
      `    agent = ${hcl(managementToken)}`,
      '  }',
      '}',
    );
  }
  return lines.join('\n') + '\n';
}

function agentArgs(entry) {
  const { ports, dataDir, configFile, node } = entry;
  return [
    'agent',
    ...(entry.persist ? [] : ['-dev']),
    `-node=${node}`,
    `-datacenter=${entry.datacenter}`,
    '-bind=127.0.0.1',
    '-client=127.0.0.1',
    '-advertise=127.0.0.1',
    `-data-dir=${dataDir}`,
    `-config-file=${configFile}`,
    `-http-port=${ports.http}`,
    `-serf-lan-port=${ports.serfLan}`,
    `-server-port=${ports.server}`,
    // Everything else that would listen on a fixed default port is switched off, so two agents
    // (consul and consul-acl) can run side by side.
    '-serf-wan-port=-1',
    '-dns-port=-1',
    '-grpc-port=-1',
    '-grpc-tls-port=-1',
  ];
}

async function leaderElected(entry) {
  const headers = entry.managementToken ? { 'X-Consul-Token': entry.managementToken } : {};
  const res = await fetch(`${entry.url}/v1/status/leader`, { headers, signal: AbortSignal.timeout(2000) });
  if (!res.ok) return false;
  const leader = await res.json();
  if (typeof leader !== 'string' || leader === '') return false;
  // The agent has synced its own node into the catalog once it is usable for registrations.
  const self = await fetch(`${entry.url}/v1/catalog/node/${encodeURIComponent(entry.node)}`, {
    headers,
    signal: AbortSignal.timeout(2000),
  });
  if (!self.ok) return false;
  const body = await self.json();
  return body !== null && body.Node !== undefined;
}

async function startAgent(entry) {
  const pid = spawnDaemon(consulBinary(), agentArgs(entry), { logFile: entry.logs[0] });
  await waitFor(`${entry.name} at ${entry.url}`, () => leaderElected(entry), {
    pid,
    logFile: entry.logs[0],
    timeoutMs: 60_000,
  });
  return pid;
}

/**
 * Starts a fresh agent for profile `name`: `acl` turns on ACLs with a generated management token;
 * `persist` runs a server agent whose state survives restartAgent() (else a dev agent, whose
 * state does not).
 */
export async function upAgent(name, { acl = false, persist = false } = {}) {
  await buildConsul();
  const dir = runDir(name);
  const dataDir = join(dir, 'data');
  rmSync(dataDir, { recursive: true, force: true });
  const entry = {
    name,
    version: CONSUL_VERSION,
    datacenter: DATACENTER,
    node: `muster-${name}-${process.pid}-${Date.now().toString(36)}`,
    ports: { http: await freePort(), serfLan: await freePort(), server: await freePort() },
    dataDir,
    persist,
    configFile: join(dir, 'agent.hcl'),
    logs: [join(dir, 'consul.log')],
    pids: [],
  };
  entry.address = `127.0.0.1:${entry.ports.http}`;
  entry.url = `http://${entry.address}`;
  if (acl) entry.managementToken = randomUUID();
  writeFileSync(entry.configFile, agentConfig({ acl, managementToken: entry.managementToken, persist }), { mode: 0o600 });
  writeFileSync(entry.logs[0], `--- ${new Date().toISOString()} testenv up ${name}\n`);
  entry.pids = [await startAgent(entry)];
  return entry;
}

export async function downAgent(entry) {
  for (const pid of entry.pids ?? []) await stopProcess(pid);
  if (entry.dataDir) rmSync(entry.dataDir, { recursive: true, force: true });
}

/**
 * Stops the agent and starts it again on the same ports: a dev agent comes back with an empty
 * catalog and KV (data loss), a persistent one with its state.
 */
export async function restartAgent(entry) {
  for (const pid of entry.pids ?? []) await stopProcess(pid);
  if (!entry.persist) rmSync(entry.dataDir, { recursive: true, force: true });
  writeFileSync(entry.logs[0], `--- ${new Date().toISOString()} testenv restart ${entry.name}\n`, { flag: 'a' });
  const pid = await startAgent(entry);
  return { ...entry, pids: [pid] };
}
