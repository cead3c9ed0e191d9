// Apache Cassandra for the integration tests: the server jars come from Maven Central (pom.xml beside
// this file) into the testenv cache; each node is a `java` process running CassandraDaemon directly,
// listening on a 127.0.0.x loopback address and free ports, its data on tmpfs when there is one.
//
// One profile = one cluster: makeProfile({ name, nodes, auth }) returns the build/up/down/restart
// functions that the modules in ../servers/ export.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { atomicDir, cacheDir, freePort, isAlive, log, run, runDir, spawnDaemon, stopProcess, waitFor } from '../lib.mjs';
import { makeServerCertificate, openssl } from '../certificates.mjs';

/** Keep in step with <cassandra.version> in pom.xml. */
export const VERSION = '5.0.8';
const here = dirname(fileURLToPath(import.meta.url));

/** Heap per node; MUSTER_CASSANDRA_HEAP overrides it (e.g. 512M). */
export const HEAP = process.env.MUSTER_CASSANDRA_HEAP || '1G';
/** Start timeout per node; starting takes 15–60 s on 2 busy cores. */
const START_TIMEOUT_MS = Number(process.env.MUSTER_CASSANDRA_START_TIMEOUT_MS || 240_000);
export const DATACENTER = 'datacenter1'; // what SimpleSnitch reports
/**
 * Node i listens on `${ADDRESS_BASE}${i + 1}`. MUSTER_CASSANDRA_ADDRESS_BASE=127.0.1. gives a private
 * cluster (fault tests that stop or kill nodes) addresses apart from the shared one on 127.0.0.x.
 */
const ADDRESS_BASE = process.env.MUSTER_CASSANDRA_ADDRESS_BASE || '127.0.0.';

// ---------------------------------------------------------------------------------------------
// build

/** The cached folder of every runtime jar (cassandra-<version>/lib); fetched with Maven on first use. */
export async function buildCassandra() {
  const libDir = join(cacheDir(`cassandra-${VERSION}`), 'lib');
  if (existsSync(libDir)) return libDir;
  const started = Date.now();
  log(`cassandra ${VERSION}: fetching jars from Maven Central into ${libDir}`);
  try {
    await atomicDir(libDir, async (tmp) => {
      await run(
        'mvn',
        [
          '-q',
          '-B',
          '-Dstyle.color=never',
          `-Dmaven.repo.local=${cacheDir('m2')}`,
          '-f',
          join(here, 'pom.xml'),
          'dependency:copy-dependencies',
          '-DincludeScope=runtime',
          `-DoutputDirectory=${tmp}`,
        ],
        { cwd: tmp },
      );
      const jars = readdirSync(tmp).filter((f) => f.endsWith('.jar'));
      if (!jars.includes(`cassandra-all-${VERSION}.jar`)) {
        throw new Error(`cassandra ${VERSION}: cassandra-all-${VERSION}.jar missing after mvn (got ${jars.length} jars)`);
      }
    });
  } catch (err) {
    // A concurrent build (another `testenv up` in parallel) may have put it in place first.
    if (!existsSync(join(libDir, `cassandra-all-${VERSION}.jar`))) throw err;
  }
  log(`cassandra ${VERSION}: ${readdirSync(libDir).length} jars cached in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return libDir;
}

// ---------------------------------------------------------------------------------------------
// JVM command line

let checkedJava;
/** The java to run: $MUSTER_CASSANDRA_JAVA, else $JAVA_HOME/bin/java, else java; must be 11 or 17. */
export function javaCommand() {
  if (checkedJava) return checkedJava;
  const java = process.env.MUSTER_CASSANDRA_JAVA || (process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java');
  const res = spawnSync(java, ['-version'], { encoding: 'utf8' });
  if (res.error)
    throw new Error(
      `cassandra: cannot run ${java} (${res.error.message}); Cassandra ${VERSION} needs Java 17 (or 11); set JAVA_HOME or MUSTER_CASSANDRA_JAVA`,
    );
  const out = `${res.stdout}${res.stderr}`; // java -version prints to stderr
  const m = /version "(\d+)(?:\.(\d+))?/.exec(out);
  const major = m ? (m[1] === '1' ? Number(m[2]) : Number(m[1])) : NaN;
  if (major !== 17 && major !== 11) {
    throw new Error(
      `cassandra: ${java} is Java ${Number.isNaN(major) ? '(unknown)' : major}; Cassandra ${VERSION} needs Java 17 ` +
        '(or 11); set JAVA_HOME or MUSTER_CASSANDRA_JAVA',
    );
  }
  checkedJava = java;
  return java;
}

// Module access Cassandra 5.0 needs on Java 17 (what its jvm17-server.options grants), written as
// "module/package" pairs opened or exported to the class path.
const EXPORTS = [
  'java.base/jdk.internal.misc',
  'java.base/java.lang.ref',
  'java.management.rmi/com.sun.jmx.remote.internal.rmi',
  'java.rmi/sun.rmi.registry',
  'java.rmi/sun.rmi.server',
  'java.sql/java.sql',
  'jdk.unsupported/sun.misc',
  'jdk.compiler/com.sun.tools.javac.file',
  'jdk.attach/sun.tools.attach',
];
const OPENS = [
  'java.base/java.io',
  'java.base/java.lang',
  'java.base/java.lang.module',
  'java.base/java.lang.reflect',
  'java.base/java.util',
  'java.base/jdk.internal.loader',
  'java.base/jdk.internal.math',
  'java.base/jdk.internal.module',
  'java.base/jdk.internal.ref',
  'java.base/jdk.internal.reflect',
  'java.base/jdk.internal.util.jar',
  'java.base/sun.nio.ch',
  'jdk.compiler/com.sun.tools.javac',
  'jdk.management/com.sun.management.internal',
];

function jvmArgs(cluster, node, libDir) {
  const jars = readdirSync(libDir)
    .filter((f) => f.endsWith('.jar'))
    .sort()
    .map((f) => join(libDir, f));
  const jamm = jars.find((j) => /\/jamm-[\d.]+\.jar$/.test(j));
  return [
    `-Xms${node.heap}`,
    `-Xmx${node.heap}`,
    '-Xss256k',
    '-XX:+UseG1GC',
    '-XX:+ParallelRefProcEnabled',
    '-XX:MaxTenuringThreshold=1',
    '-XX:+PerfDisableSharedMem',
    // C1 only: halves the CPU a start costs (about 14 s instead of 28 s here), which is most of the
    // start time on 2 busy cores; tests do not run long enough to profit from C2.
    // MUSTER_CASSANDRA_JVM_OPTS=-XX:TieredStopAtLevel=4 turns C2 back on.
    '-XX:TieredStopAtLevel=1',
    '-XX:+ExitOnOutOfMemoryError',
    ...(jamm ? [`-javaagent:${jamm}`] : []),
    ...(process.env.MUSTER_CASSANDRA_JVM_OPTS || '').split(/\s+/).filter(Boolean),
    ...EXPORTS.flatMap((p) => ['--add-exports', `${p}=ALL-UNNAMED`]),
    ...OPENS.flatMap((p) => ['--add-opens', `${p}=ALL-UNNAMED`]),
    '-Djdk.attach.allowAttachSelf=true',
    '-Djava.net.preferIPv4Stack=true',
    '-Dio.netty.tryReflectionSetAccessible=true',
    '-Dio.netty.allocator.useCacheForAllThreads=true',
    '-Dio.netty.allocator.maxOrder=11',
    // JMX on loopback only, registry and server on the one port.
    `-Dcassandra.jmx.local.port=${node.jmxPort}`,
    `-Dcom.sun.management.jmxremote.rmi.port=${node.jmxPort}`,
    '-Djava.rmi.server.hostname=127.0.0.1',
    `-Dcassandra.config=file://${node.configFile}`,
    `-Dlogback.configurationFile=file://${node.logbackFile}`,
    `-Dcassandra.logdir=${node.dir}`,
    `-Dcassandra.storagedir=${node.dataDir}`,
    `-Dcassandra.triggers_dir=${join(node.dir, 'triggers')}`,
    '-Dcassandra-foreground=yes',
    '-Dcassandra.skip_wait_for_gossip_to_settle=0',
    '-Dcassandra.unsafesystem=true',
    // The default superuser is set up this long after start, and retried at this interval until
    // every node is up: at once for one node, but not 0 for a cluster (that retries in a busy loop).
    `-Dcassandra.superuser_setup_delay_ms=${cluster.nodes.length === 1 ? 0 : 1000}`,
    '-cp',
    jars.join(':'),
    'org.apache.cassandra.service.CassandraDaemon',
  ];
}

// ---------------------------------------------------------------------------------------------
// configuration files

const q = (s) => JSON.stringify(String(s)); // a JSON string is a valid YAML scalar

function cassandraYaml(cluster, node) {
  const d = (sub) => q(join(node.dataDir, sub));
  const lines = [
    `cluster_name: ${q(cluster.clusterName)}`,
    'num_tokens: 1',
    `initial_token: ${q(node.token)}`,
    'partitioner: org.apache.cassandra.dht.Murmur3Partitioner',
    'endpoint_snitch: SimpleSnitch',
    'seed_provider:',
    '  - class_name: org.apache.cassandra.locator.SimpleSeedProvider',
    '    parameters:',
    `      - seeds: ${q(`${cluster.nodes[0].host}:${cluster.nodes[0].storagePort}`)}`,
    `listen_address: ${node.host}`,
    `rpc_address: ${node.host}`,
    `storage_port: ${node.storagePort}`,
    `native_transport_port: ${node.nativePort}`,
    'start_native_transport: true',
    'auto_bootstrap: false',
    'auto_snapshot: false',
    'commitlog_sync: periodic',
    'commitlog_sync_period: 10000ms',
    `commitlog_directory: ${d('commitlog')}`,
    'data_file_directories:',
    `  - ${d('data')}`,
    `hints_directory: ${d('hints')}`,
    `saved_caches_directory: ${d('saved_caches')}`,
    `cdc_raw_directory: ${d('cdc_raw')}`,
    'file_cache_size: 64MiB',
  ];
  if (cluster.auth) {
    lines.push('authenticator: PasswordAuthenticator', 'authorizer: CassandraAuthorizer', 'role_manager: CassandraRoleManager');
  } else {
    lines.push('authenticator: AllowAllAuthenticator', 'authorizer: AllowAllAuthorizer');
  }
  if (cluster.tls) {
    // optional: the native port speaks TLS to clients that start a handshake and plain CQL to
    // the rest, so one node serves both the TLS tests and the plain ones.
    lines.push(
      'client_encryption_options:',
      '  enabled: true',
      '  optional: true',
      `  keystore: ${q(cluster.tls.keystore)}`,
      `  keystore_password: ${q(cluster.tls.keystorePassword)}`,
      '  store_type: PKCS12',
      '  require_client_auth: false',
    );
  }
  return lines.join('\n') + '\n';
}

const LOGBACK = `<configuration scan="false">
  <!-- Everything to stdout, which the launcher appends to the node's log file. -->
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %logger{0}:%L - %msg%n</pattern></encoder>
  </appender>
  <logger name="org.apache.cassandra" level="INFO"/>
  <root level="INFO"><appender-ref ref="OUT"/></root>
</configuration>
`;

// ---------------------------------------------------------------------------------------------
// ports and folders

function canBind(port, host) {
  return new Promise((resolveBind) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolveBind(false));
    server.listen(port, host, () => server.close(() => resolveBind(true)));
  });
}

/** A port free on every one of `hosts` (the driver expects one native port for the whole cluster). */
async function commonFreePort(hosts) {
  for (let i = 0; i < 50; i++) {
    const port = await freePort(hosts[0]);
    let ok = true;
    for (const h of hosts.slice(1)) if (!(await canBind(port, h))) ok = false;
    if (ok) return port;
  }
  throw new Error(`no port free on all of ${hosts.join(', ')}`);
}

/** Data lives on tmpfs when there is one, under a folder keyed by this checkout's run dir. */
function dataRoot(profile) {
  const key = createHash('sha256').update(runDir()).digest('hex').slice(0, 10);
  if (existsSync('/dev/shm')) return join('/dev/shm', `muster-testenv-${key}`, profile);
  return runDir('cassandra', profile, 'data');
}

function rmEmptyDir(dir) {
  try {
    rmdirSync(dir);
  } catch {
    // not empty (another profile's data, or logs): kept
  }
}

// Murmur3 tokens spread evenly over the ring: node i of n gets -2^63 + i * 2^64 / n.
function tokenFor(i, n) {
  return (-(2n ** 63n) + (BigInt(i) * 2n ** 64n) / BigInt(n)).toString();
}

// ---------------------------------------------------------------------------------------------
// CQL

let driverPromise;
async function driver() {
  driverPromise ??= import('cassandra-driver').then((m) => m.default ?? m);
  return driverPromise;
}

async function withClient(contactPoint, { username, password, timeoutMs = 10_000 } = {}, fn) {
  const cassandra = await driver();
  const client = new cassandra.Client({
    contactPoints: [contactPoint],
    localDataCenter: DATACENTER,
    ...(username ? { authProvider: new cassandra.auth.PlainTextAuthProvider(username, password) } : {}),
    socketOptions: { connectTimeout: timeoutMs, readTimeout: timeoutMs },
    pooling: { warmup: false },
    policies: { reconnection: new cassandra.policies.reconnection.ConstantReconnectionPolicy(60_000) },
  });
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.shutdown().catch(() => {});
  }
}

/** release_version of the node at host:port, once it accepts a CQL session (and the login). */
async function nodeInfo(node, creds) {
  return withClient(`${node.host}:${node.nativePort}`, creds, async (client) => {
    const local = (await client.execute('SELECT release_version FROM system.local')).first();
    const peers = (await client.execute('SELECT peer FROM system.peers')).rows.length;
    return { version: local.release_version, peers };
  });
}

// ---------------------------------------------------------------------------------------------
// processes

/**
 * Cassandra mlockall()s its whole address space at start. As root that succeeds: the full heap
 * becomes resident at once (and faulting it in costs seconds). Dropping CAP_IPC_LOCK leaves the
 * usual 8 MiB RLIMIT_MEMLOCK in force, so the call fails harmlessly (a warning in the log) and the
 * node only takes the memory it uses. Non-root users are in that position already.
 */
function withoutMemoryLock() {
  if (process.env.MUSTER_CASSANDRA_MLOCK === '1') return [];
  if (process.getuid?.() !== 0 || !existsSync('/usr/bin/setpriv')) return [];
  return ['/usr/bin/setpriv', '--bounding-set', '-ipc_lock', '--inh-caps', '-ipc_lock', '--'];
}

async function startNode(cluster, node, libDir) {
  writeFileSync(node.configFile, cassandraYaml(cluster, node));
  writeFileSync(node.logbackFile, LOGBACK);
  writeFileSync(node.logFile, `\n===== ${new Date().toISOString()} starting ${cluster.name} ${node.id} =====\n`, { flag: 'a' });
  const started = Date.now();
  mkdirSync(join(node.dir, 'triggers'), { recursive: true });
  const [cmd, ...args] = [...withoutMemoryLock(), javaCommand(), ...jvmArgs(cluster, node, libDir)];
  const pid = spawnDaemon(cmd, args, { logFile: node.logFile, cwd: node.dir });
  const creds = cluster.auth ? { username: cluster.username, password: cluster.password } : {};
  let info;
  await waitFor(
    `${cluster.name} ${node.id} (${node.host}:${node.nativePort})`,
    async () => {
      info = await nodeInfo(node, creds);
      return true;
    },
    { timeoutMs: START_TIMEOUT_MS, intervalMs: 1000, pid, logFile: node.logFile },
  );
  log(
    `${cluster.name} ${node.id}: CQL ready in ${((Date.now() - started) / 1000).toFixed(1)} s ` +
      `(pid ${pid}, ${cpuSeconds(pid)} s CPU, ${peakRssMiB(pid)} MiB peak RSS)`,
  );
  return { pid, version: info.version };
}

async function waitForRing(cluster) {
  const n = cluster.nodes.length;
  if (n === 1) return;
  const creds = cluster.auth ? { username: cluster.username, password: cluster.password } : {};
  for (const node of cluster.nodes) {
    await waitFor(`${cluster.name} ${node.id} sees ${n - 1} peers`, async () => (await nodeInfo(node, creds)).peers === n - 1, {
      timeoutMs: 120_000,
      intervalMs: 1000,
      pid: node.pid,
      logFile: node.logFile,
    });
  }
}

function toEntry(cluster, version) {
  const first = cluster.nodes[0];
  return {
    version,
    host: first.host,
    nativePort: first.nativePort,
    contactPoints: cluster.nodes.map((n) => `${n.host}:${n.nativePort}`),
    localDataCenter: DATACENTER,
    clusterName: cluster.clusterName,
    ...(cluster.auth ? { username: cluster.username, password: cluster.password } : {}),
    ...(cluster.tls ? { tls: cluster.tls } : {}),
    heap: cluster.heap,
    pids: cluster.nodes.map((n) => n.pid),
    logs: cluster.nodes.map((n) => n.logFile),
    nodes: cluster.nodes.map(({ id, host, nativePort, storagePort, jmxPort, pid, logFile, dataDir, configFile, token }) => ({
      id,
      host,
      nativePort,
      storagePort,
      jmxPort,
      pid,
      log: logFile,
      dataDir,
      config: configFile,
      token,
    })),
  };
}

/** The cluster description kept in the entry, back in the shape startNode() takes. */
function fromEntry(name, entry) {
  return {
    name,
    clusterName: entry.clusterName,
    auth: entry.username !== undefined,
    username: entry.username,
    password: entry.password,
    tls: entry.tls,
    heap: entry.heap,
    nodes: entry.nodes.map((n) => ({
      id: n.id,
      host: n.host,
      nativePort: n.nativePort,
      storagePort: n.storagePort,
      jmxPort: n.jmxPort,
      pid: n.pid,
      logFile: n.log,
      dataDir: n.dataDir,
      configFile: n.config,
      logbackFile: join(dirname(n.config), 'logback.xml'),
      dir: dirname(n.config),
      token: n.token,
      heap: entry.heap,
    })),
  };
}

async function stopNodes(cluster) {
  // Last started first; SIGTERM lets Cassandra run its shutdown hook (flush, close the commit log).
  for (const node of [...cluster.nodes].reverse()) await stopProcess(node.pid, { timeoutMs: 30_000 });
}

async function startNodes(cluster, libDir) {
  let version;
  try {
    for (const node of cluster.nodes) {
      const res = await startNode(cluster, node, libDir);
      node.pid = res.pid;
      version = res.version;
    }
    await waitForRing(cluster);
  } catch (err) {
    await stopNodes(cluster);
    throw err;
  }
  return version;
}

// ---------------------------------------------------------------------------------------------
// one cluster per profile and checkout

/** Pids of running Cassandra daemons whose config is `configFile`, found by their command lines. */
function daemonsUsing(configFile) {
  const flag = `-Dcassandra.config=file://${configFile}`;
  const pids = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(flag)) pids.push(Number(d));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return pids;
}

/**
 * Two `testenv up` runs of one profile in one checkout would share config files and data dirs.
 * Refuses when a node of the profile is already running (outside `allowed`) or another process is
 * starting it; returns the function that releases the claim.
 */
function claimProfile(name, dir, configFiles, allowed = []) {
  for (const file of configFiles) {
    const others = daemonsUsing(file).filter((pid) => !allowed.includes(pid));
    if (others.length > 0) {
      throw new Error(
        `${name}: a node with ${file} is already running as pid ${others.join(', ')} (another 'testenv up ${name}' ` +
          `in this checkout?); stop it first, or use MUSTER_TESTENV_DIR for a separate run dir`,
      );
    }
  }
  const lock = join(dir, 'starting.pid');
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    const owner = Number(readFileSync(lock, 'utf8'));
    if (owner && owner !== process.pid && isAlive(owner)) {
      throw new Error(`${name}: process ${owner} is starting it right now (${lock})`);
    }
    writeFileSync(lock, String(process.pid));
  }
  return () => rmSync(lock, { force: true });
}

/**
 * A CA and a PKCS12 keystore with a serving certificate for the nodes' addresses (and localhost):
 * what clients verify, hostname included, when they connect with TLS.
 */
async function makeKeystore(dir, hosts) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const sans = [...hosts.map((h) => `IP:${h}`), 'DNS:localhost'];
  const { caFile, certFile, keyFile } = await makeServerCertificate(dir, { cn: 'muster-testenv-cassandra', sans });
  const keystore = join(dir, 'keystore.p12');
  const keystorePassword = 'muster-testenv';
  await openssl(
    [
      'pkcs12',
      '-export',
      '-in',
      certFile,
      '-inkey',
      keyFile,
      '-name',
      'cassandra',
      '-out',
      keystore,
      '-passout',
      `pass:${keystorePassword}`,
    ],
    dir,
  );
  return { caFile, keystore, keystorePassword, optional: true };
}

// ---------------------------------------------------------------------------------------------
// the profile

/**
 * build/up/down/restart for one Cassandra cluster of `nodes` nodes on 127.0.0.1..n.
 * `auth`: PasswordAuthenticator + CassandraAuthorizer, logging in as the default superuser.
 * `tls`: client encryption, optional (TLS and plain CQL on the native port); the entry's `tls.caFile`
 * verifies it.
 */
export function makeProfile({ name, nodes = 1, auth = false, tls = false }) {
  async function build() {
    return buildCassandra();
  }

  async function up() {
    const libDir = await buildCassandra();
    const hosts = Array.from({ length: nodes }, (_, i) => `${ADDRESS_BASE}${i + 1}`);
    const nativePort = await commonFreePort(hosts);
    let storagePort = await commonFreePort(hosts);
    while (storagePort === nativePort) storagePort = await commonFreePort(hosts);
    const root = dataRoot(name);
    const cluster = {
      name,
      clusterName: `muster-${name}`,
      auth,
      ...(auth ? { username: 'cassandra', password: 'cassandra' } : {}),
      ...(tls ? { tls: await makeKeystore(runDir('cassandra', name, 'tls'), hosts) } : {}),
      heap: HEAP,
      nodes: [],
    };
    for (let i = 0; i < nodes; i++) {
      const id = `node${i + 1}`;
      const dir = runDir('cassandra', name, id);
      let jmxPort = await freePort();
      while ([nativePort, storagePort].includes(jmxPort) || cluster.nodes.some((n) => n.jmxPort === jmxPort)) {
        jmxPort = await freePort();
      }
      cluster.nodes.push({
        id,
        host: hosts[i],
        nativePort,
        storagePort,
        jmxPort,
        token: tokenFor(i, nodes),
        dir,
        dataDir: join(root, id),
        configFile: join(dir, 'cassandra.yaml'),
        logbackFile: join(dir, 'logback.xml'),
        logFile: join(dir, 'cassandra.log'),
        heap: HEAP,
      });
    }
    const release = claimProfile(
      name,
      runDir('cassandra', name),
      cluster.nodes.map((n) => n.configFile),
    );
    try {
      rmSync(root, { recursive: true, force: true });
      // A new cluster starts new logs (restart appends to them).
      for (const node of cluster.nodes) rmSync(node.logFile, { force: true });
      const version = await startNodes(cluster, libDir);
      return toEntry(cluster, version);
    } finally {
      release();
    }
  }

  async function down(entry) {
    const cluster = fromEntry(name, entry);
    await stopNodes(cluster);
    for (const node of cluster.nodes) rmSync(node.dataDir, { recursive: true, force: true });
    rmSync(dataRoot(name), { recursive: true, force: true });
    // And the per-run-dir folder above it once it is empty: a test with a private run dir leaves none.
    rmEmptyDir(dirname(dataRoot(name)));
  }

  async function restart(entry) {
    const libDir = await buildCassandra();
    const cluster = fromEntry(name, entry);
    const release = claimProfile(
      name,
      runDir('cassandra', name),
      cluster.nodes.map((n) => n.configFile),
      cluster.nodes.map((n) => n.pid),
    );
    try {
      await stopNodes(cluster);
      const version = await startNodes(cluster, libDir);
      return toEntry(cluster, version);
    } finally {
      release();
    }
  }

  /**
   * Starts one node of a running cluster again (a fault test killed it); returns the entry with its
   * new pid. The other nodes keep running.
   */
  async function restartNode(entry, nodeId) {
    const libDir = await buildCassandra();
    const cluster = fromEntry(name, entry);
    const node = cluster.nodes.find((n) => n.id === nodeId);
    if (!node) throw new Error(`${name}: no node ${nodeId}; the nodes are ${cluster.nodes.map((n) => n.id).join(', ')}`);
    await stopProcess(node.pid, { timeoutMs: 30_000 });
    node.pid = (await startNode(cluster, node, libDir)).pid;
    await waitForRing(cluster);
    return toEntry(cluster, entry.version);
  }

  return { build, up, down, restart, restartNode };
}

/** CPU time (user + system) a running pid has used, in seconds. */
export function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / 100).toFixed(1);
  } catch {
    return undefined;
  }
}

/** Peak resident set (VmHWM) of a running pid, in MiB; undefined when it is gone. */
export function peakRssMiB(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}
