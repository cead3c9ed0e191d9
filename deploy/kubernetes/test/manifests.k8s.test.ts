// deploy/kubernetes/cql-proxy: the manifests fit together, the embedded config passes the proxy's
// own validation, and the real kube-apiserver from `npm run testenv -- up k8s` accepts every
// object (server-side dry-run, strict field validation, Pod Security "restricted").
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, type ConfigSource } from '@muster/core';
import kubernetes from '@muster/adapter-k8s';
import { readProxyConfig } from '../../../packages/cql-proxy/src/config.js';
import { testServer } from '../../../scripts/testenv/state.mjs';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- manifests are free-form YAML
type Obj = Record<string, any>;

const here = fileURLToPath(new URL('.', import.meta.url));
const dir = resolve(here, '../cql-proxy');
const repo = resolve(here, '../../..');
const kustomization = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as { namespace: string; resources: string[] };

function documents(file: string): Obj[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => {
      if (d.errors.length) throw new Error(`${file}: ${d.errors[0]!.message}`);
      return d.toJS() as Obj | null;
    })
    .filter((o): o is Obj => o !== null);
}

/** Every object, in the order kustomize would list them. */
const objects = kustomization.resources.flatMap((file) => documents(join(dir, file)));
const one = (kind: string): Obj => {
  const found = objects.filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`expected one ${kind}, found ${found.length}`);
  return found[0]!;
};
const sts = one('StatefulSet');
const pod = sts.spec.template;
const container = pod.spec.containers[0];
const configMap = one('ConfigMap');
const env = { POD_NAME: 'muster-cql-proxy-0', POD_IP: '10.1.2.3' };

function configFile(): string {
  const volume = pod.spec.volumes.find((v: Obj) => v.name === container.volumeMounts[0].name);
  expect(volume.configMap.name).toBe(configMap.metadata.name);
  const args: string[] = container.args;
  const path = args[args.indexOf('--config') + 1]!;
  expect(path.startsWith(`${container.volumeMounts[0].mountPath}/`)).toBe(true);
  const key = path.slice(container.volumeMounts[0].mountPath.length + 1);
  const text = configMap.data[key];
  expect(typeof text).toBe('string');
  return text as string;
}

// The ConfigMap's muster.yaml as the proxy reads it, from a file as at /etc/muster/muster.yaml.
async function embeddedConfig(): Promise<ConfigSource> {
  const file = join(mkdtempSync(join(tmpdir(), 'muster-manifests-')), 'muster.yaml');
  writeFileSync(file, configFile());
  return loadConfig(file, { env });
}

describe('deploy/kubernetes/cql-proxy (static)', () => {
  it('kustomization.yaml lists every manifest in the folder', () => {
    const files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    for (const o of objects) expect(o.metadata.namespace).toBe(kustomization.namespace);
  });

  it('the embedded config passes the proxy validation and the kubernetes adapter options', async () => {
    const source = await embeddedConfig();
    const proxy = readProxyConfig(source, undefined);
    expect(proxy.instanceId).toBe(env.POD_NAME);
    expect(proxy.advertise).toEqual({ address: env.POD_IP, port: 9042 });
    for (const port of ['discovery', 'heartbeat']) {
      expect((source.data[port] as Obj).adapter).toBe('kubernetes');
      source.parse([port, 'options'], kubernetes.options);
    }
    expect(source.data.lock).toBeUndefined();
  });

  it('the CLI accepts it: muster-cql-proxy --check', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'muster-manifests-'));
    try {
      const file = join(tmp, 'muster.yaml');
      writeFileSync(file, configFile());
      const cli = join(repo, 'packages/cql-proxy/dist/cli.js');
      const out = execFileSync(process.execPath, [cli, '--check', '--config', file], { env: { ...process.env, ...env }, encoding: 'utf8' });
      const effective = JSON.parse(out) as Obj;
      expect(effective.proxy.instanceId).toBe(env.POD_NAME);
      expect(effective.proxy.listen).toEqual({ host: '0.0.0.0', port: 9042 });
      // Every ${VAR} the config reads is one the pod sets.
      const { status, stderr } = (() => {
        try {
          execFileSync(process.execPath, [cli, '--check', '--config', file], {
            env: { PATH: process.env.PATH },
            encoding: 'utf8',
            stdio: 'pipe',
          });
          return { status: 0, stderr: '' };
        } catch (error) {
          return error as { status: number; stderr: string };
        }
      })();
      expect(status).toBe(2);
      expect(stderr).toMatch(/environment variable POD_(NAME|IP) is not set/);
      const defined = new Set(container.env.map((e: Obj) => e.name));
      for (const [, name] of configFile().matchAll(/^[^#\n]*\$\{([A-Za-z_][A-Za-z0-9_]*)/gm)) expect(defined).toContain(name);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('the objects refer to each other consistently', async () => {
    const source = await embeddedConfig();
    const proxy = readProxyConfig(source, undefined);
    const service = one('Service');
    const labels: Obj = pod.metadata.labels;
    const selects = (selector: Obj) => Object.entries(selector).every(([k, v]) => labels[k] === v);

    // Discovery reads the EndpointSlices of the Service named proxy.service.
    expect(service.metadata.name).toBe(proxy.service);
    expect(service.spec.clusterIP).toBe('None');
    expect(service.spec.publishNotReadyAddresses).toBeUndefined();
    expect(sts.spec.serviceName).toBe(service.metadata.name);
    expect(selects(service.spec.selector)).toBe(true);
    expect(selects(sts.spec.selector.matchLabels)).toBe(true);
    expect(selects(one('PodDisruptionBudget').spec.selector.matchLabels)).toBe(true);

    // Ports: the config, the container and the Service agree.
    const ports = Object.fromEntries(container.ports.map((p: Obj) => [p.name, p.containerPort]));
    expect(ports).toEqual({ cql: proxy.listen.port, http: proxy.http.port });
    expect(proxy.advertise?.port).toBe(proxy.listen.port);
    expect(source.data.discovery).toMatchObject({ options: { port: 'cql' } });
    expect(service.spec.ports.map((p: Obj) => [p.name, p.targetPort])).toEqual([
      ['cql', 'cql'],
      ['http', 'http'],
    ]);
    expect(proxy.listen.host).toBe('0.0.0.0');
    expect(proxy.http.host).toBe('0.0.0.0');

    // Probes on the health endpoints of the HTTP port.
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health/liveness', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health/readiness', port: 'http' });

    // Downward API for the identity the config reads.
    const fieldOf = (name: string) => container.env.find((e: Obj) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;
    expect(fieldOf('POD_NAME')).toBe('metadata.name');
    expect(fieldOf('POD_IP')).toBe('status.podIP');

    // The drain fits in the grace period, after the preStop sleep.
    const preStopMs = container.lifecycle.preStop.sleep.seconds * 1000;
    expect(preStopMs).toBeGreaterThan(0);
    expect(pod.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + proxy.shutdown.drainTimeout);

    // Identity: the pods run as the account the RoleBinding grants the Role to.
    const account = one('ServiceAccount');
    const binding = one('RoleBinding');
    expect(pod.spec.serviceAccountName).toBe(account.metadata.name);
    expect(binding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: one('Role').metadata.name });
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: account.metadata.name, namespace: kustomization.namespace }]);
  });

  it("the Role grants exactly the adapter's discovery and heartbeat rules from deploy/kubernetes/rbac.yaml", () => {
    const grants = (roles: Obj[]) => {
      const out = new Map<string, Set<string>>();
      for (const role of roles)
        for (const rule of role.rules)
          for (const group of rule.apiGroups)
            for (const resource of rule.resources) {
              const key = `${group}/${resource}`;
              out.set(key, new Set([...(out.get(key) ?? []), ...rule.verbs]));
            }
      return Object.fromEntries([...out].map(([k, v]) => [k, [...v].sort()]));
    };
    const adapterRoles = documents(resolve(dir, '../rbac.yaml')).filter((o) => o.kind === 'Role');
    expect(adapterRoles.length).toBe(2);
    expect(grants([one('Role')])).toEqual(grants(adapterRoles));
  });
});

interface K8sEntry {
  server: string;
  caFile: string;
  adminToken: string;
}

const entry = testServer<K8sEntry>('k8s');
const describeK8s = entry ? describe : describe.skip;

interface Reply {
  status: number;
  body: Obj;
  warnings: string[];
}

function call(method: string, path: string, body?: unknown): Promise<Reply> {
  const url = new URL(path, entry!.server);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method,
        ca: readFileSync(entry!.caFile),
        headers: {
          authorization: `Bearer ${entry!.adminToken}`,
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const warning = res.headers.warning;
          done({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as Obj) : {},
            warnings: warning === undefined ? [] : Array.isArray(warning) ? warning : [warning],
          });
        });
      },
    );
    req.on('error', fail);
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${path}: timed out`)));
    req.end(payload);
  });
}

const resourceCache = new Map<string, Obj[]>();

/** The collection URL of `o` in `namespace`, from the API server's own discovery documents. */
async function collection(o: Obj, namespace: string): Promise<string> {
  const base = o.apiVersion === 'v1' ? '/api/v1' : `/apis/${o.apiVersion}`;
  if (!resourceCache.has(base)) {
    const reply = await call('GET', base);
    if (reply.status !== 200) throw new Error(`${base} is not served: ${reply.status}`);
    resourceCache.set(base, reply.body.resources as Obj[]);
  }
  const resource = resourceCache.get(base)!.find((r) => r.kind === o.kind && !String(r.name).includes('/'));
  if (!resource) throw new Error(`${o.apiVersion} serves no ${o.kind}`);
  return resource.namespaced ? `${base}/namespaces/${namespace}/${resource.name}` : `${base}/${resource.name}`;
}

const dryRun = '?dryRun=All&fieldManager=muster-manifests-test&fieldValidation=Strict';

/** Server-side dry-run create: admission and validation run in full, nothing is stored. */
async function dryRunCreate(o: Obj, namespace: string): Promise<Reply> {
  return call('POST', `${await collection(o, namespace)}${dryRun}`, o);
}

/** The object as it would be installed into `namespace` (what kustomize's namespace: does). */
function into(o: Obj, namespace: string): Obj {
  const copy = structuredClone(o);
  copy.metadata.namespace = namespace;
  for (const subject of copy.subjects ?? []) if (subject.kind === 'ServiceAccount') subject.namespace = namespace;
  return copy;
}

const describeMessage = (o: Obj, r: Reply) =>
  `${o.kind}/${o.metadata.name}: ${r.status} ${r.body.message ?? ''}${r.warnings.length ? `; warnings: ${r.warnings.join(' | ')}` : ''}`;

describeK8s('deploy/kubernetes/cql-proxy on the real kube-apiserver (server-side dry-run)', () => {
  const namespace = `muster-manifests-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

  beforeAll(async () => {
    // Pod Security "restricted" enforced on pods and warned about on workloads (StatefulSet).
    const labels = { 'pod-security.kubernetes.io/enforce': 'restricted', 'pod-security.kubernetes.io/warn': 'restricted' };
    const created = await call('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels },
    });
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    if (!entry) return;
    await call('DELETE', `/api/v1/namespaces/${namespace}`);
    // The testenv runs no namespace controller, so drop its finalizer ourselves (dry-run stored
    // nothing in it), or the namespace would stay Terminating.
    const ns = await call('GET', `/api/v1/namespaces/${namespace}`);
    if (ns.status === 200) await call('PUT', `/api/v1/namespaces/${namespace}/finalize`, { ...ns.body, spec: { finalizers: [] } });
  });

  it('accepts every object, with no warnings', async () => {
    const failures: string[] = [];
    for (const o of objects) {
      const reply = await dryRunCreate(into(o, namespace), namespace);
      if (reply.status !== 201 || reply.warnings.length) failures.push(describeMessage(o, reply));
      else {
        expect(reply.body.kind).toBe(o.kind);
        expect(reply.body.metadata.name).toBe(o.metadata.name);
      }
    }
    expect(failures).toEqual([]);
    // Dry-run stored nothing.
    const services = await call('GET', `/api/v1/namespaces/${namespace}/services`);
    expect(services.body.items).toEqual([]);
  });

  it("admits the StatefulSet's first pod under Pod Security restricted", async () => {
    const first = into(
      { apiVersion: 'v1', kind: 'Pod', metadata: { ...pod.metadata, name: `${sts.metadata.name}-0` }, spec: pod.spec },
      namespace,
    );
    const reply = await dryRunCreate(first, namespace);
    expect(describeMessage(first, reply)).toBe(`Pod/${first.metadata.name}: 201 `);
  });

  it('would notice a rejection (the checks are not vacuous)', async () => {
    // An unknown field fails strict validation.
    const typo = into(sts, namespace);
    typo.spec.template.spec.containers[0].readinesProbe = typo.spec.template.spec.containers[0].readinessProbe;
    const rejected = await dryRunCreate(typo, namespace);
    expect(rejected.status).toBe(400);
    expect(rejected.body.message).toMatch(/readinesProbe/);
    // A pod that may run as root is refused by Pod Security.
    const root = into({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'root-0' }, spec: structuredClone(pod.spec) }, namespace);
    delete root.spec.securityContext.runAsNonRoot;
    delete root.spec.securityContext.runAsUser;
    const refused = await dryRunCreate(root, namespace);
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/runAsNonRoot/);
    // The same template in a StatefulSet is stored, but with the warning the first test forbids.
    const warned = into(sts, namespace);
    warned.spec.template.spec = root.spec;
    const reply = await dryRunCreate(warned, namespace);
    expect(reply.status).toBe(201);
    expect(reply.warnings.join(' ')).toMatch(/runAsNonRoot/);
  });
});
