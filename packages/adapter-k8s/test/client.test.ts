import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endpointSlices, kubernetesError, leases, microTime, resolveConnection } from '../src/client.js';

const dir = mkdtempSync(join(tmpdir(), 'muster-k8s-client-'));
const kubeconfig = (name: string, text: string) => {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
};
const base = { baseDir: dir, env: {} as Record<string, string | undefined> };

const twoContexts = kubeconfig(
  'two.yaml',
  `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: ca
  cluster: { server: "https://127.0.0.1:6443", certificate-authority-data: ${Buffer.from('CA-PEM').toString('base64')} }
- name: cb
  cluster: { server: "https://10.1.1.1:443", insecure-skip-tls-verify: true, tls-server-name: api.internal }
users:
- name: ua
  user: { token: secret-a }
- name: ub
  user: { tokenFile: token-b }
contexts:
- name: a
  context: { cluster: ca, user: ua, namespace: team-a }
- name: b
  context: { cluster: cb, user: ub }
`,
);
writeFileSync(join(dir, 'token-b'), 'secret-b\n');

describe('resolveConnection', () => {
  test('kubeconfig: current context, its namespace, token and CA', async () => {
    const c = await resolveConnection({ ...base, kubeconfig: 'two.yaml' });
    expect(c.server.href).toBe('https://127.0.0.1:6443/');
    expect(c.namespace).toBe('team-a');
    expect(c.credentials.tls.ca?.toString()).toBe('CA-PEM');
    expect(await c.credentials.headers()).toEqual({ Authorization: 'Bearer secret-a' });
  });

  test('kubeconfig: another context, a token file relative to the kubeconfig, explicit namespace wins', async () => {
    const c = await resolveConnection({ ...base, kubeconfig: twoContexts, context: 'b', namespace: 'ops' });
    expect(c.server.host).toBe('10.1.1.1');
    expect(c.namespace).toBe('ops');
    expect(c.credentials.tls).toMatchObject({ rejectUnauthorized: false, servername: 'api.internal' });
    expect(await c.credentials.headers()).toEqual({ Authorization: 'Bearer secret-b' });
    expect((await resolveConnection({ ...base, kubeconfig: twoContexts, context: 'b' })).namespace).toBe('default');
  });

  test('clear errors: unknown context, missing file, no current context, a server that is not http(s)', async () => {
    await expect(resolveConnection({ ...base, kubeconfig: twoContexts, context: 'nope' })).rejects.toThrow(
      /has no context 'nope' \(contexts: a, b\)/,
    );
    await expect(resolveConnection({ ...base, kubeconfig: 'missing.yaml' })).rejects.toThrow(
      /cannot read kubeconfig .*missing\.yaml \(ENOENT\)/,
    );
    const noCurrent = kubeconfig('nocurrent.yaml', 'contexts: []\n');
    await expect(resolveConnection({ ...base, kubeconfig: noCurrent })).rejects.toThrow(/no current-context; set the context option/);
    const ftp = kubeconfig(
      'ftp.yaml',
      'current-context: x\ncontexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [{name: c, cluster: {server: "ftp://localhost:8080"}}]\n',
    );
    await expect(resolveConnection({ ...base, kubeconfig: ftp })).rejects.toThrow(
      /ftp\.yaml: cluster 'c' has server ftp:\/\/localhost:8080; write an https:\/\/ \(or http:\/\/\) URL/,
    );
  });

  test('nothing configured: no silent localhost:8080, an error that says what was tried', async () => {
    const env = { HOME: join(dir, 'nohome') };
    await expect(resolveConnection({ baseDir: dir, env })).rejects.toThrow(
      /no Kubernetes cluster configured: not in a pod .* does not exist/,
    );
    await expect(resolveConnection({ baseDir: dir, env, describe: (o) => `muster.yaml:3:5: discovery.options.${o}` })).rejects.toThrow(
      /^muster\.yaml:3:5: discovery\.options\.kubeconfig: no Kubernetes cluster configured/,
    );
  });

  test('$KUBECONFIG and ~/.kube/config are found', async () => {
    expect((await resolveConnection({ baseDir: dir, env: { KUBECONFIG: `${twoContexts}:/elsewhere` } })).namespace).toBe('team-a');
    mkdirSync(join(dir, 'home', '.kube'), { recursive: true });
    writeFileSync(
      join(dir, 'home', '.kube', 'config'),
      `current-context: b\n${(await import('node:fs')).readFileSync(twoContexts, 'utf8').replace('current-context: a\n', '')}`,
    );
    expect((await resolveConnection({ baseDir: dir, env: { HOME: join(dir, 'home') } })).server.host).toBe('10.1.1.1');
  });

  test('in-cluster: service host, token, CA and namespace files; refused outside a pod', async () => {
    const sa = join(dir, 'sa');
    mkdirSync(sa);
    writeFileSync(join(sa, 'token'), 'pod-token');
    writeFileSync(join(sa, 'ca.crt'), 'POD-CA');
    writeFileSync(join(sa, 'namespace'), 'prod\n');
    const env = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const c = await resolveConnection({ baseDir: dir, env, serviceAccountDir: sa });
    expect([c.server.href, c.namespace, c.credentials.tls.ca?.toString()]).toEqual(['https://10.0.0.1/', 'prod', 'POD-CA']);
    expect(await c.credentials.headers()).toEqual({ Authorization: 'Bearer pod-token' });
    expect((await resolveConnection({ baseDir: dir, env, serviceAccountDir: sa, namespace: 'other' })).namespace).toBe('other');
    // A kubeconfig given explicitly wins over the pod's own config.
    expect((await resolveConnection({ baseDir: dir, env, serviceAccountDir: sa, kubeconfig: twoContexts })).namespace).toBe('team-a');
    await expect(resolveConnection({ baseDir: dir, env: {}, inCluster: true, serviceAccountDir: sa })).rejects.toThrow(
      /does not run in a pod/,
    );
    await expect(resolveConnection({ baseDir: dir, env, inCluster: true, serviceAccountDir: join(dir, 'none') })).rejects.toThrow(
      /no service-account token/,
    );
    const v6 = await resolveConnection({
      baseDir: dir,
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' },
      serviceAccountDir: sa,
    });
    expect(v6.server.host).toBe('[fd00::1]:6443');
  });
});

describe('kubernetesError', () => {
  const target = { namespace: 'prod', name: 'leader', identity: 'system:serviceaccount:prod:muster' };
  test('403 names verb, resource and identity and points to the shipped Role', () => {
    const body = JSON.stringify({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message: 'leases.coordination.k8s.io "leader" is forbidden',
    });
    const error = kubernetesError('update', leases, target, { status: 403, body });
    expect(error.status).toBe(403);
    expect(error.reason).toBe('Forbidden');
    expect(error.code).toBe('MUSTER_BACKEND');
    expect(error.message).toMatch(
      /^kubernetes: update leases\.coordination\.k8s\.io 'leader' in namespace 'prod': forbidden by RBAC for system:serviceaccount:prod:muster/,
    );
    expect(error.message).toContain('deploy/kubernetes/rbac.yaml');
  });

  test('accepts client-node ApiException (code, body as a JSON string)', () => {
    const error = kubernetesError(
      'list',
      endpointSlices,
      { namespace: 'prod' },
      { code: 409, body: '{"reason":"Conflict","message":"the object has been modified"}' },
    );
    expect([error.status, error.reason]).toEqual([409, 'Conflict']);
    expect(error.message).toContain("list endpointslices.discovery.k8s.io in namespace 'prod': 409 Conflict: the object has been modified");
  });

  test('401 and a missing namespace say what to fix; a non-JSON body is kept short', () => {
    expect(kubernetesError('get', leases, target, { status: 401, body: '' }).message).toMatch(
      /rejected the credentials \(401 Unauthorized\)/,
    );
    const ns = JSON.stringify({
      reason: 'NotFound',
      code: 404,
      details: { name: 'prod', kind: 'namespaces' },
      message: 'namespaces "prod" not found',
    });
    expect(kubernetesError('create', leases, target, { status: 404, body: ns }).message).toMatch(/namespace 'prod' does not exist/);
    expect(kubernetesError('get', leases, target, { status: 502, body: 'x'.repeat(1000) }).message.length).toBeLessThan(500);
  });
});

test('microTime has six fractional digits', () => {
  expect(microTime(Date.UTC(2026, 11, 2, 15, 46, 10, 5))).toBe('2026-12-02T15:46:10.005000Z');
});
