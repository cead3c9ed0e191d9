#!/usr/bin/env node
// npm start: the proxy's main job on the embedded default. Brings up the local Cassandra (the
// testenv's, reused when it already runs, else built or taken from the cache and started), three
// proxy processes with static membership on 127.0.0.1–3, waits until a driver sees all three,
// prints how to connect, and stops everything it started on Ctrl-C or SIGTERM.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import cassandra from 'cassandra-driver';
import { CQLSH_VERSION } from '../testenv/cassandra/cqlsh.mjs';
import { cacheDir, isAlive, repoRoot } from '../testenv/lib.mjs';
import { readState, stateFile } from '../testenv/state.mjs';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.MUSTER_START_PORT ?? '9042' },
    'http-port': { type: 'string', default: process.env.MUSTER_START_HTTP_PORT ?? '9100' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(`npm start [-- --port 9042 --http-port 9100]

Three muster-cql-proxy processes on 127.0.0.1, 127.0.0.2, 127.0.0.3 (CQL --port, HTTP --http-port),
static membership, in front of the testenv Cassandra (started if it is not running; stopped again on
exit only then). Ctrl-C stops what it started. Environment: MUSTER_START_PORT, MUSTER_START_HTTP_PORT,
MUSTER_TESTENV_DIR (where the testenv's state.json is).`);
  process.exit(0);
}
const port = Number(values.port);
const httpPort = Number(values['http-port']);
const hosts = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];
const cli = join(repoRoot, 'packages/cql-proxy/dist/cli.js');
const testenv = join(repoRoot, 'scripts/testenv/cli.mjs');
const say = (line) => console.log(`[muster start] ${line}`);

if (!existsSync(cli)) {
  console.error(`[muster start] ${cli} is missing: run npm run build first (npm start does)`);
  process.exit(1);
}

let startedCassandra = false;
const proxies = [];
let stopping;
let dir;

function cassandraEntry() {
  const entry = readState().cassandra;
  return entry && entry.pids?.every((pid) => isAlive(pid)) ? entry : undefined;
}

async function stopAll(code) {
  stopping ??= (async () => {
    say('stopping');
    for (const p of proxies) if (p.child.exitCode === null) p.child.kill('SIGTERM');
    await Promise.all(proxies.map((p) => p.exited));
    if (startedCassandra) {
      say('stopping the Cassandra it started');
      execFileSync(process.execPath, [testenv, 'down', 'cassandra'], { stdio: 'inherit' });
    }
    // The configs and logs are kept only when something failed, to read why.
    if (code === 0 && dir) rmSync(dir, { recursive: true, force: true });
    say(code === 0 ? 'stopped' : `stopped; configs and logs kept in ${dir}`);
    process.exit(code);
  })();
  return stopping;
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));
// Whatever ends this process (an unexpected error too), the proxies it started do not outlive it.
process.on('exit', () => {
  for (const p of proxies) if (p.child.exitCode === null) p.child.kill('SIGTERM');
});

let backend = cassandraEntry();
if (backend) say(`using the running testenv Cassandra ${backend.contactPoints.join(', ')} (${stateFile()})`);
else {
  say('starting the testenv Cassandra (the first time builds it into ~/.cache/muster-testenv; minutes)');
  startedCassandra = true;
  try {
    if (readState().cassandra) {
      say('the state file names a Cassandra that is no longer running: clearing it first');
      execFileSync(process.execPath, [testenv, 'down', 'cassandra'], { stdio: 'inherit' });
    }
    execFileSync(process.execPath, [testenv, 'up', 'cassandra'], { stdio: 'inherit' });
  } catch {
    console.error('[muster start] npm run testenv -- up cassandra failed (its output is above)');
    await stopAll(1);
  }
  backend = cassandraEntry();
  if (!backend) {
    console.error(`[muster start] Cassandra did not come up; see ${stateFile()} and the logs under it`);
    await stopAll(1);
  }
}

dir = mkdtempSync(join(tmpdir(), 'muster-start-'));
const members = hosts.map((host, i) => `      - { id: proxy-${i}, address: ${host}, port: ${port} }`).join('\n');
for (const [i, host] of hosts.entries()) {
  const config = join(dir, `proxy-${i}.yaml`);
  writeFileSync(
    config,
    `# proxy-${i} of three, written by npm start (scripts/start/start.mjs)
discovery:
  adapter: static
  options:
    members:
${members}
    self: proxy-${i}
proxy:
  listen: { host: ${host}, port: ${port} }
  http: { host: ${host}, port: ${httpPort} }
  backend:
    contactPoints: [${backend.contactPoints.join(', ')}]
`,
  );
  const log = join(dir, `proxy-${i}.log`);
  const out = openSync(log, 'a');
  const child = spawn(process.execPath, [cli, '--config', config], { stdio: ['ignore', out, out] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  proxies.push({ id: `proxy-${i}`, host, log, child, exited });
  void exited.then((code) => {
    if (stopping) return;
    console.error(`[muster start] proxy-${i} exited (${code}); its log ${log} ends:\n${tail(log)}`);
    void stopAll(1);
  });
}
say(`three proxies starting (configs and logs in ${dir})`);

// Ready means: every instance reports ready, and a driver connected to one of them sees all three.
const deadline = Date.now() + 120_000;
for (const p of proxies) {
  while (
    !(await fetch(`http://${p.host}:${httpPort}/health/readiness`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) {
      console.error(`[muster start] ${p.id} was not ready within 120 s; its log ${p.log} ends:\n${tail(p.log)}`);
      await stopAll(1);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
const client = new cassandra.Client({
  contactPoints: [`${hosts[0]}:${port}`],
  localDataCenter: backend.localDataCenter,
  protocolOptions: { port },
});
try {
  await client.connect();
  while (client.hosts.values().filter((h) => h.isUp()).length < hosts.length) {
    if (Date.now() > deadline) throw new Error(`the driver sees ${client.hosts.length} hosts, not ${hosts.length}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const { rows } = await client.execute('SELECT release_version FROM system.local');
  say(`a driver sees ${hosts.length} hosts; Cassandra ${rows[0]?.release_version} behind them`);
} catch (error) {
  console.error(`[muster start] no driver could connect: ${error.message}`);
  await stopAll(1);
} finally {
  await client.shutdown().catch(() => undefined);
}

// The testenv's cqlsh when it was installed (npm run testenv -- up cassandra does not need it); else one on PATH.
const cachedCqlsh = join(cacheDir(), `cqlsh-${CQLSH_VERSION}`, 'bin', 'cqlsh');
const cqlsh = existsSync(cachedCqlsh) ? cachedCqlsh : 'cqlsh';

console.log(`
Ready: three proxies on ${hosts.map((h) => `${h}:${port}`).join(', ')} in front of Cassandra ${backend.contactPoints.join(', ')}.

  ${cqlsh} ${hosts[0]} ${port}

  // Node.js, cassandra-driver: every peer is dialled on protocolOptions.port, so set it to the proxies' port
  const client = new cassandra.Client({ contactPoints: ['${hosts[0]}:${port}'], localDataCenter: '${backend.localDataCenter}', protocolOptions: { port: ${port} } });

  topology: ${hosts.map((h) => `http://${h}:${httpPort}/topology`).join('  ')}
  metrics:  http://${hosts[0]}:${httpPort}/metrics

Ctrl-C stops the proxies${startedCassandra ? ' and the Cassandra this started' : ''}.`);
say(`running (pids ${proxies.map((p) => p.child.pid).join(', ')})`);

function tail(file) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}
