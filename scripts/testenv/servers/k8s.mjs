// The real Kubernetes API server (kube-apiserver + etcd) for the integration tests.
//
// build(): compiles kube-apiserver from k8s.io/kubernetes through the wrapper module in
//   scripts/testenv/k8s/ and etcd + etcdctl through scripts/testenv/etcd/, into version-keyed cache
//   folders (filled atomically). Needs Go (GOTOOLCHAIN=local) and the Go module proxy.
// up(): generates a CA, a serving cert (SANs 127.0.0.1, localhost) and a service-account key pair
//   with openssl, starts etcd (data on tmpfs, no fsync) and kube-apiserver on free loopback ports,
//   waits for /readyz and checks /version and the API groups the tests rely on.
//
// There is no controller-manager: no default ServiceAccount objects, no garbage collection, no
// EndpointSlices derived from Pods. Tests create what they need (ServiceAccounts, EndpointSlices).
// kube-apiserver itself compacts etcd every 5 minutes (its default --etcd-compaction-interval).
//
// Forcing "410 Gone" (expired resourceVersion) in a test. Compacting etcd alone is NOT enough:
// kube-apiserver's watch cache keeps serving watches and lists from older resourceVersions (seen
// here: a watch from a compacted RV replayed its events). What works (measured on v1.36.3):
//   1. note an old resourceVersion R, make some writes,
//   2. compact etcd to its current revision:
//        await compactEtcd(entry)                 // exported below; etcd's HTTP/JSON gateway:
//                                                 //   POST {etcdEndpoint}/v3/kv/range      -> header.revision
//                                                 //   POST {etcdEndpoint}/v3/kv/compaction {"revision":"N","physical":true}
//      or: <entry.etcdctl> --endpoints=<entry.etcdEndpoint> compaction <N>
//   3. restart kube-apiserver (restart(entry), or `npm run testenv -- restart k8s`, which also
//      updates the state file); its watch cache is rebuilt from etcd's current revision.
//   Then watch?resourceVersion=R gets an ERROR event {code: 410, reason: "Expired", "too old
//   resource version"}, and list?resourceVersion=R&resourceVersionMatch=Exact gets HTTP 410.
// (After a restart alone, without compaction, only the watch gets 410; the exact list is then
// served from etcd.)
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { atomicDir, cacheDir, freePort, log, run, runDir, spawnDaemon, stopProcess, waitFor } from '../lib.mjs';
import { makeServerCertificate, openssl } from '../certificates.mjs';

export const name = 'k8s';

export const KUBE_VERSION = 'v1.36.3';
export const ETCD_VERSION = 'v3.6.16';
export const ELECTOR_VERSION = 'v0.1.0';

const testenvDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// Go environment for the builds: the installed toolchain only, static binaries.
const goEnv = () => ({ ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0' });

// cacheDir() creates the folder it names, which would make atomicDir() skip the build, so the
// final folder is named under the cache root without creating it.
const cachePath = (key) => join(cacheDir(), key);

const kubeBinDir = () => cachePath(`kube-apiserver-${KUBE_VERSION}`);
const etcdBinDir = () => cachePath(`etcd-${ETCD_VERSION}`);
const electorBinDir = () => cachePath(`k8s-elector-${ELECTOR_VERSION}`);

function versionLdflags() {
  const [major, minor] = KUBE_VERSION.slice(1).split('.');
  const flags = ['-s', '-w'];
  for (const pkg of ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version']) {
    flags.push(
      `-X ${pkg}.gitVersion=${KUBE_VERSION}`,
      `-X ${pkg}.gitMajor=${major}`,
      `-X ${pkg}.gitMinor=${minor}`,
      `-X ${pkg}.gitTreeState=clean`,
    );
  }
  return flags.join(' ');
}

async function timed(what, fn) {
  const started = Date.now();
  await fn();
  log(`${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Builds (or finds cached) kube-apiserver and etcd/etcdctl; returns their paths. */
export async function build() {
  const kubeDir = kubeBinDir();
  if (!existsSync(kubeDir)) {
    log(`building kube-apiserver ${KUBE_VERSION} into ${kubeDir} (cold: 15-30 min on 2 cores)`);
    await timed('kube-apiserver built', () =>
      atomicDir(kubeDir, (tmp) =>
        run(
          'go',
          ['build', '-trimpath', '-ldflags', versionLdflags(), '-o', join(tmp, 'kube-apiserver'), 'k8s.io/kubernetes/cmd/kube-apiserver'],
          { cwd: join(testenvDir, 'k8s'), env: goEnv() },
        ),
      ),
    );
  }
  const etcdDir = etcdBinDir();
  if (!existsSync(etcdDir)) {
    log(`building etcd ${ETCD_VERSION} into ${etcdDir}`);
    await timed('etcd built', () =>
      atomicDir(etcdDir, async (tmp) => {
        const env = goEnv();
        const cwd = join(testenvDir, 'etcd');
        await run('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', join(tmp, 'etcd'), 'go.etcd.io/etcd/server/v3'], { cwd, env });
        await run('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', join(tmp, 'etcdctl'), 'go.etcd.io/etcd/etcdctl/v3'], {
          cwd,
          env,
        });
      }),
    );
  }
  // The interop tests run a client-go elector: build it here, not inside a test's time budget.
  const elector = await buildElector();
  return {
    kubeApiserver: join(kubeDir, 'kube-apiserver'),
    etcd: join(etcdDir, 'etcd'),
    etcdctl: join(etcdDir, 'etcdctl'),
    elector,
  };
}

/** Builds (or finds cached) our client-go leader-election probe (scripts/testenv/k8s-elector). */
export async function buildElector() {
  const dir = electorBinDir();
  if (!existsSync(dir)) {
    log(`building k8s-elector ${ELECTOR_VERSION} into ${dir}`);
    await timed('k8s-elector built', () =>
      atomicDir(dir, (tmp) =>
        run('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', join(tmp, 'k8s-elector'), '.'], {
          cwd: join(testenvDir, 'k8s-elector'),
          env: goEnv(),
        }),
      ),
    );
  }
  return join(dir, 'k8s-elector');
}

// ---------------------------------------------------------------------------------------------
// certificates and config files

async function makeCerts(dir) {
  const sans = ['IP:127.0.0.1', 'DNS:localhost', 'IP:10.0.0.1', 'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc'];
  const serving = await makeServerCertificate(dir, { cn: 'kube-apiserver', sans });
  // Service-account token signing key (ES256) and its public half for verification.
  await openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'sa.key'], dir);
  await openssl(['pkey', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
  return {
    ...serving,
    saKey: join(dir, 'sa.key'),
    saPub: join(dir, 'sa.pub'),
  };
}

function writeKubeconfig(file, { server, caFile, token }) {
  const ca = readFileSync(caFile).toString('base64');
  const yaml = `apiVersion: v1
kind: Config
clusters:
- name: muster-testenv
  cluster:
    server: ${server}
    certificate-authority-data: ${ca}
users:
- name: admin
  user:
    token: ${token}
contexts:
- name: muster-testenv
  context:
    cluster: muster-testenv
    user: admin
    namespace: default
current-context: muster-testenv
`;
  const tmp = `${file}.tmp-${process.pid}`;
  writeFileSync(tmp, yaml, { mode: 0o600 });
  renameSync(tmp, file);
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

function httpCall(url, { method = 'GET', body, ca, token, timeoutMs = 5000 } = {}) {
  return new Promise((resolveCall, reject) => {
    const u = new URL(url);
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    let payload;
    if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body));
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(u, { method, headers, ca, timeout: timeoutMs }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolveCall({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function apiGet(entry, path) {
  return httpCall(`${entry.server}${path}`, { ca: readFileSync(entry.caFile), token: entry.adminToken });
}

async function etcdPost(entry, path, body) {
  const res = await httpCall(`${entry.etcdEndpoint}${path}`, { method: 'POST', body });
  if (res.status !== 200) throw new Error(`etcd ${path}: HTTP ${res.status} ${res.text}`);
  return JSON.parse(res.text);
}

/**
 * Compacts etcd up to its current revision (physically), so every older resourceVersion is gone
 * and lists/watches from them fail with 410 Gone. Returns the revision compacted to.
 */
export async function compactEtcd(entry) {
  const range = await etcdPost(entry, '/v3/kv/range', { key: Buffer.from('/').toString('base64') });
  const revision = Number(range.header.revision);
  await etcdPost(entry, '/v3/kv/compaction', { revision: String(revision), physical: true });
  return revision;
}

// ---------------------------------------------------------------------------------------------
// processes

function etcdArgs(e) {
  const client = e.etcdEndpoint;
  const peer = `http://127.0.0.1:${e.etcdPeerPort}`;
  return [
    '--name=muster-testenv',
    `--data-dir=${e.etcdDataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=muster-testenv=${peer}`,
    '--initial-cluster-state=new',
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

function apiserverArgs(e) {
  return [
    `--etcd-servers=${e.etcdEndpoint}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${e.port}`,
    `--cert-dir=${join(e.runDir, 'apiserver-cert-dir')}`,
    `--tls-cert-file=${e.certFile}`,
    `--tls-private-key-file=${e.keyFile}`,
    `--service-account-issuer=${e.server}`,
    `--service-account-key-file=${e.saPub}`,
    `--service-account-signing-key-file=${e.saKey}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=RBAC',
    `--token-auth-file=${e.tokenFile}`,
    '--disable-admission-plugins=ServiceAccount',
    '--endpoint-reconciler-type=none',
    '--profiling=false',
  ];
}

async function startEtcd(e) {
  const pid = spawnDaemon(e.etcdBinary, etcdArgs(e), { logFile: e.etcdLog });
  await waitFor(
    'etcd',
    async () => {
      const res = await httpCall(`${e.etcdEndpoint}/health`, { timeoutMs: 2000 });
      return res.status === 200 && JSON.parse(res.text).health === 'true';
    },
    { pid, logFile: e.etcdLog, timeoutMs: 60_000 },
  );
  return pid;
}

async function startApiserver(e) {
  const pid = spawnDaemon(e.apiserverBinary, apiserverArgs(e), { logFile: e.apiserverLog });
  await waitFor(
    'kube-apiserver',
    async () => {
      const res = await apiGet(e, '/readyz');
      return res.status === 200 && res.text.trim() === 'ok';
    },
    { pid, logFile: e.apiserverLog, timeoutMs: 180_000, intervalMs: 300 },
  );
  return pid;
}

/** Fails with a clear message unless the server is the expected version and serves our groups. */
async function verifyApiserver(e) {
  const version = await apiGet(e, '/version');
  if (version.status !== 200) throw new Error(`kube-apiserver /version: HTTP ${version.status} ${version.text}`);
  const gitVersion = JSON.parse(version.text).gitVersion;
  if (gitVersion !== KUBE_VERSION) {
    throw new Error(`kube-apiserver /version reports ${gitVersion}, expected ${KUBE_VERSION} (version ldflags missing?)`);
  }
  for (const group of ['discovery.k8s.io/v1', 'coordination.k8s.io/v1']) {
    const res = await apiGet(e, `/apis/${group}`);
    if (res.status !== 200) throw new Error(`kube-apiserver does not serve ${group}: HTTP ${res.status} ${res.text.slice(0, 200)}`);
  }
  return gitVersion;
}

function shmBase() {
  return existsSync('/dev/shm') ? '/dev/shm' : undefined;
}

export async function up() {
  const bins = await build();
  const started = Date.now();
  const dir = runDir('k8s');
  // Anything left from an earlier run of this checkout (state already said it was down).
  for (const f of readdirSync(dir)) rmSync(join(dir, f), { recursive: true, force: true });
  const certDir = join(dir, 'certs');
  const logDir = join(dir, 'logs');
  mkdirSync(certDir, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const certs = await makeCerts(certDir);

  const adminToken = randomBytes(24).toString('hex');
  const tokenFile = join(certDir, 'tokens.csv');
  writeFileSync(tokenFile, `${adminToken},muster-admin,muster-admin,"system:masters"\n`, { mode: 0o600 });

  const shm = shmBase();
  const etcdDataDir = shm ? join(shm, `muster-testenv-k8s-etcd-${process.pid}-${randomBytes(4).toString('hex')}`) : join(dir, 'etcd-data');

  const [etcdPort, etcdPeerPort, port] = await Promise.all([freePort(), freePort(), freePort()]);
  const e = {
    version: KUBE_VERSION,
    etcdVersion: ETCD_VERSION,
    server: `https://127.0.0.1:${port}`,
    port,
    kubeconfig: join(dir, 'kubeconfig'),
    context: 'muster-testenv',
    namespace: 'default',
    caFile: certs.caFile,
    adminToken,
    etcdEndpoint: `http://127.0.0.1:${etcdPort}`,
    etcdPeerPort,
    etcdDataDir,
    etcdctl: bins.etcdctl,
    runDir: dir,
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    saKey: certs.saKey,
    saPub: certs.saPub,
    tokenFile,
    etcdBinary: bins.etcd,
    apiserverBinary: bins.kubeApiserver,
    etcdLog: join(logDir, 'etcd.log'),
    apiserverLog: join(logDir, 'kube-apiserver.log'),
  };
  e.logs = [e.etcdLog, e.apiserverLog];
  e.pids = [];
  try {
    e.etcdPid = await startEtcd(e);
    e.pids = [e.etcdPid];
    e.apiserverPid = await startApiserver(e);
    e.pids = [e.etcdPid, e.apiserverPid];
    await verifyApiserver(e);
  } catch (err) {
    for (const pid of [e.apiserverPid, e.etcdPid]) await stopProcess(pid);
    rmSync(etcdDataDir, { recursive: true, force: true });
    throw err;
  }
  writeKubeconfig(e.kubeconfig, { server: e.server, caFile: e.caFile, token: adminToken });
  e.startedAt = new Date().toISOString();
  e.startSeconds = Number(((Date.now() - started) / 1000).toFixed(1));
  return e;
}

export async function down(entry) {
  await stopProcess(entry.apiserverPid);
  await stopProcess(entry.etcdPid);
  for (const pid of entry.pids ?? []) await stopProcess(pid);
  if (entry.etcdDataDir) rmSync(entry.etcdDataDir, { recursive: true, force: true });
  // Keep the logs for diagnosis; drop certificates, tokens, kubeconfig and data.
  if (entry.runDir && existsSync(entry.runDir)) {
    for (const f of readdirSync(entry.runDir)) {
      if (f !== 'logs') rmSync(join(entry.runDir, f), { recursive: true, force: true });
    }
  }
}

/** Restarts kube-apiserver only (etcd keeps running with its data) on the same port. */
export async function restart(entry) {
  await stopProcess(entry.apiserverPid);
  const apiserverPid = await startApiserver(entry);
  const e = { ...entry, apiserverPid, pids: [entry.etcdPid, apiserverPid] };
  await verifyApiserver(e);
  return e;
}
