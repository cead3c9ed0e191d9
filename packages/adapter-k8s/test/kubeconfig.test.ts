// What users meet in kubeconfigs: a KUBECONFIG list merged as kubectl merges it, http:// servers,
// proxy-url, a rotated token file, and a KubeConfig object passed in code.
import { describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConnection } from '../src/client.js';
import { kubeConfigOption } from '../src/kube-config-option.js';
import { TokenFile } from '../src/token-file.js';

const dir = mkdtempSync(join(tmpdir(), 'muster-k8s-kubeconfig-'));
const write = (name: string, text: string) => {
  const file = join(dir, name);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
  return file;
};

describe('a KUBECONFIG list is merged as kubectl merges it', () => {
  // first: no current-context, cluster "shared" and user "alice" (its tokenFile beside first).
  const first = write(
    'one/first.yaml',
    `clusters: [{ name: shared, cluster: { server: "https://first.example:6443" } }]
users: [{ name: alice, user: { tokenFile: alice-token } }]
contexts: [{ name: dev, context: { cluster: shared, user: alice, namespace: dev-ns } }]
`,
  );
  write('one/alice-token', 'alice-from-first\n');
  // second: the first current-context, a context "prod", and "shared"/"dev" again, which lose.
  const second = write(
    'two/second.yaml',
    `current-context: prod
clusters:
- { name: shared, cluster: { server: "https://second.example:6443" } }
- { name: prod-cluster, cluster: { server: "https://prod.example" } }
users:
- { name: alice, user: { token: from-second } }
- { name: bob, user: { tokenFile: bob-token } }
contexts:
- { name: dev, context: { cluster: prod-cluster, user: bob } }
- { name: prod, context: { cluster: shared, user: bob, namespace: prod-ns } }
`,
  );
  write('two/bob-token', 'bob-from-second\n');
  // third: sets current-context too, but after second did.
  const third = write('three.yaml', 'current-context: dev\n');
  const env = { KUBECONFIG: `${join(dir, 'missing.yaml')}:${first}::${second}:${third}` };

  test('current-context from the first file that sets it; each name from the first file that has it', async () => {
    const c = await resolveConnection({ baseDir: dir, env });
    // prod (from second) → cluster "shared" as the first file has it, user bob with his token file
    // resolved beside second.yaml.
    expect([c.server.host, c.namespace]).toEqual(['first.example:6443', 'prod-ns']);
    expect(await c.credentials.headers()).toEqual({ Authorization: 'Bearer bob-from-second' });
    expect(c.source).toContain(`${first}:${second}:${third}`);
  });

  test('an entry is taken whole from its first file, never merged with later ones', async () => {
    const c = await resolveConnection({ baseDir: dir, env, context: 'dev' });
    expect([c.server.host, c.namespace]).toEqual(['first.example:6443', 'dev-ns']);
    expect(await c.credentials.headers()).toEqual({ Authorization: 'Bearer alice-from-first' });
  });

  test('files that do not exist are skipped; when none exists the error names the list', async () => {
    await expect(resolveConnection({ baseDir: dir, env: { KUBECONFIG: `${join(dir, 'a')}:${join(dir, 'b')}` } })).rejects.toThrow(
      /none of KUBECONFIG=.*\/a:.*\/b exists/,
    );
  });
});

describe('servers and proxies', () => {
  const config = (server: string, cluster = '') =>
    write(
      `s-${Math.random().toString(36).slice(2)}.yaml`,
      `current-context: x
contexts: [{ name: x, context: { cluster: c, user: u } }]
clusters: [{ name: c, cluster: { server: "${server}"${cluster} } }]
users: [{ name: u, user: { token: t } }]
`,
    );

  test('an http:// server (kubectl proxy) is accepted', async () => {
    const c = await resolveConnection({ baseDir: dir, kubeconfig: config('http://127.0.0.1:8001') });
    expect(c.server.href).toBe('http://127.0.0.1:8001/');
    expect(c.proxy).toBeUndefined();
  });

  test('proxy-url: http and https proxies are used; socks is refused naming the cluster and the fix', async () => {
    const c = await resolveConnection({
      baseDir: dir,
      kubeconfig: config('https://10.0.0.1', ', proxy-url: "http://user:pw@proxy.corp:3128"'),
    });
    expect(c.proxy?.href).toBe('http://user:pw@proxy.corp:3128/');
    await expect(
      resolveConnection({ baseDir: dir, kubeconfig: config('https://10.0.0.1', ', proxy-url: "socks5://proxy.corp:1080"') }),
    ).rejects.toThrow(
      /cluster 'c' has proxy-url socks5:\/\/ \(socks5:\/\/proxy\.corp:1080\), which this adapter does not speak: use an http:\/\/ proxy/,
    );
  });
});

describe('TokenFile', () => {
  test('re-read when it changed and a minute passed, or at once on reload()', () => {
    const file = write('rotating-token', 'one\n');
    let now = 1_000_000;
    const token = new TokenFile(file, { now: () => now });
    expect(token.read()).toBe('one');
    writeFileSync(file, 'two\n');
    now += 30_000;
    expect(token.read()).toBe('one');
    expect(token.reload()).toBe(true);
    expect(token.read()).toBe('two');
    expect(token.reload()).toBe(false);
    writeFileSync(file, 'three\n');
    now += 61_000;
    expect(token.read()).toBe('three');
  });
});

describe('the kubeConfig option', () => {
  const fake = (server = 'https://10.0.0.9:6443') => ({
    getCurrentContext: () => 'ctx',
    getContextObject: (name: string) => (name === 'ctx' ? { user: 'me', namespace: 'from-kc' } : null),
    getCurrentCluster: () => ({ name: 'c', server }),
    applyToHTTPSOptions: async (opts: { headers?: Record<string, string>; ca?: string }) => {
      opts.ca = 'CA';
      opts.headers = { ...opts.headers, Authorization: `Bearer call-${++calls}` };
    },
  });
  let calls = 0;

  test('asked for its auth on every call; its context decides cluster and namespace', async () => {
    const c = await resolveConnection({ baseDir: dir, kubeConfig: fake() });
    expect([c.server.href, c.namespace, c.credentials.tls.ca]).toEqual(['https://10.0.0.9:6443/', 'from-kc', 'CA']);
    const before = calls;
    expect(await c.credentials.headers()).toEqual({ Authorization: `Bearer call-${before + 1}` });
    expect(await c.credentials.headers()).toEqual({ Authorization: `Bearer call-${before + 2}` });
    expect((await resolveConnection({ baseDir: dir, kubeConfig: fake(), namespace: 'mine' })).namespace).toBe('mine');
  });

  test('cannot be combined with the options that choose a cluster', async () => {
    await expect(resolveConnection({ baseDir: dir, kubeConfig: fake(), kubeconfig: 'x.yaml' })).rejects.toThrow(
      /option 'kubeconfig': cannot be combined with kubeConfig .*setCurrentContext/,
    );
  });

  test('the option accepts a KubeConfig-shaped object only, and is redacted in printed configs', () => {
    const issues: { path: readonly (string | number)[]; message: string }[] = [];
    expect(kubeConfigOption.parse(fake(), ['kubeConfig'], issues)).toBeDefined();
    expect(kubeConfigOption.parse('~/.kube/config', ['kubeConfig'], issues)).toBeUndefined();
    expect(issues[0]?.message).toMatch(
      /expected a KubeConfig object from @kubernetes\/client-node .*; a kubeconfig file is the kubeconfig option/,
    );
    expect(kubeConfigOption.jsonSchema()).toMatchObject({ writeOnly: true });
  });
});

describe('an exec plugin', () => {
  test('runs through @kubernetes/client-node, relative to the file that names the user', async () => {
    write(
      'plugin/credential.mjs',
      `console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: 'from-exec' } }));\n`,
    );
    const env = {
      KUBECONFIG: `${write('cluster-only.yaml', `current-context: x\nclusters: [{ name: c, cluster: { server: "https://10.0.0.1" } }]\ncontexts: [{ name: x, context: { cluster: c, user: plugin } }]\n`)}:${write(
        'plugin/user.yaml',
        `users: [{ name: plugin, user: { exec: { apiVersion: client.authentication.k8s.io/v1beta1, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(join(dir, 'plugin/credential.mjs'))}] } } }]\n`,
      )}`,
    };
    const c = await resolveConnection({ baseDir: dir, env });
    expect(await c.credentials.headers()).toEqual({ Authorization: 'Bearer from-exec' });
  }, 30_000);
});
