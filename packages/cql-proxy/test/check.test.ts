// --check runs every validation the start runs (issue 13): each broken config a newcomer wrote is
// refused with file:line:col, the printed config is the one the run uses, secrets never show.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'muster-check-'));
const check = (name: string, text: string, env: Record<string, string> = {}) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  const r = spawnSync(process.execPath, [bin, '--check', '--config', path], {
    encoding: 'utf8',
    env: { ...process.env, ...env, NODE_OPTIONS: '' },
  });
  return { path, code: r.status, out: r.stdout, err: r.stderr };
};

const members = `discovery:
  adapter: static
  options:
    members:
      - { id: proxy-0, address: 127.0.0.1, port: 9042 }
      - { id: proxy-1, address: 127.0.0.2, port: 9042 }
    self: proxy-1
`;
const proxy = `proxy:
  backend: { contactPoints: [127.0.0.1:9142] }
`;

describe('muster-cql-proxy --check', () => {
  it('a typo in adapter options (memebers) is an unknown key at its place', () => {
    const r = check('typo.yaml', `discovery:\n  adapter: static\n  options:\n    memebers: []\n${proxy}`);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.path}:4:15: discovery.options.memebers: unknown key; expected one of`);
  });

  it('an unknown adapter (statc) names the place and the built-ins', () => {
    const r = check('statc.yaml', `discovery:\n  adapter: statc\n${proxy}`);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.path}:2:12: discovery.adapter: adapter 'statc': package statc is not installed`);
    expect(r.err).toContain('static, kubernetes, consul');
  });

  it('a self that names no member is refused at its place', () => {
    const r = check('self.yaml', `${members.replace('self: proxy-1', 'self: proxy-9')}${proxy}`);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.path}:7:11: discovery.options.self: "proxy-9" matches no member (ids: proxy-0, proxy-1)`);
  });

  it('a contact point with a port out of range is refused at its place; a bare IPv6 address is a host', () => {
    for (const bad of ['127.0.0.1:99999', 'cassandra:0', '127.0.0.1:9042:1']) {
      const r = check('contact.yaml', `proxy:\n  backend: { contactPoints: [127.0.0.1, "${bad}"] }\n`);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${r.path}:2:41: proxy.backend.contactPoints[1]: ${JSON.stringify(bad)} is not host, host:port`);
    }
    for (const bad of ['::1:99999', '1:2:3', ':::', '[1:2:3]:9042']) {
      const r = check('contact6.yaml', `proxy:\n  backend: { contactPoints: [127.0.0.1, "${bad}"] }\n`);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${r.path}:2:41: proxy.backend.contactPoints[1]: ${JSON.stringify(bad)} is not an IPv6 address`);
    }
    const r = check('ipv6.yaml', `proxy:\n  backend: { contactPoints: ["::1", "[fd00::2]:9142"] }\n`);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });

  it('a Consul agent address that is no URL or has no valid port is refused at its place, or named as CONSUL_HTTP_ADDR', () => {
    for (const bad of ['http://127.0.0.1:99999', 'not a url', '127.0.0.1:0']) {
      const r = check('consul.yaml', `discovery: { adapter: consul, options: { address: "${bad}" } }\n${proxy}`);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${r.path}:1:51: discovery.options.address: ${JSON.stringify(bad)} is not host:port or an http(s) URL`);
    }
    const r = check('consul-env.yaml', `discovery: { adapter: consul }\n${proxy}`, { CONSUL_HTTP_ADDR: 'consul:99999' });
    expect(r.code).toBe(2);
    expect(r.err).toContain('CONSUL_HTTP_ADDR: "consul:99999" is not host:port');
    const tls = check('consul-tls.yaml', `lock: { adapter: consul, options: { tls: { caFile: ./no-consul-ca.pem } } }\n${proxy}`);
    expect(tls.code).toBe(2);
    expect(tls.err).toContain(`lock.options.tls.caFile: cannot read ${join(dir, 'no-consul-ca.pem')} (ENOENT)`);
  });

  it('a Kubernetes kubeconfig that is missing, or a context it does not have, is refused at its place', () => {
    const missing = check('k8s-missing.yaml', `discovery: { adapter: kubernetes, options: { kubeconfig: ./none.yaml } }\n${proxy}`);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(
      `${missing.path}:1:58: discovery.options.kubeconfig: cannot read kubeconfig ${join(dir, 'none.yaml')} (ENOENT)`,
    );
    writeFileSync(
      join(dir, 'kubeconfig.yaml'),
      `clusters: [{ name: c, cluster: { server: "https://127.0.0.1:6443" } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: a, context: { cluster: c, user: u } }]
current-context: a
`,
    );
    const context = check(
      'k8s-context.yaml',
      `lock: { adapter: kubernetes, options: { kubeconfig: kubeconfig.yaml, context: b } }\n${proxy}`,
    );
    expect(context.code).toBe(2);
    expect(context.err).toContain(
      `${context.path}:1:79: lock.options.context: ${join(dir, 'kubeconfig.yaml')} has no context 'b' (contexts: a)`,
    );
    const good = check('k8s-good.yaml', `lock: { adapter: kubernetes, options: { kubeconfig: kubeconfig.yaml } }\n${proxy}`);
    expect(good.err).toBe('');
    expect(good.code).toBe(0);
    // Written for a pod (auto-detection): checked where the proxy runs, so --check elsewhere passes.
    const pod = check('k8s-pod.yaml', `discovery: { adapter: kubernetes }\n${proxy}`, {
      HOME: dir,
      KUBECONFIG: '',
      KUBERNETES_SERVICE_HOST: '',
    });
    expect(pod.err).toBe('');
    expect(pod.code).toBe(0);
  });

  it('a TLS file the start would read and cannot is refused at its place, or naming the variable that set it', () => {
    const backend = check('tls-backend.yaml', `proxy:\n  backend: { contactPoints: [127.0.0.1], tls: { caFile: ./no-ca.pem } }\n`);
    expect(backend.code).toBe(2);
    expect(backend.err).toContain(`${backend.path}:2:57: proxy.backend.tls.caFile: cannot read ./no-ca.pem (ENOENT)`);
    writeFileSync(join(dir, 'cert.pem'), 'not checked here, only read');
    const text = `${proxy}  tls: { certFile: cert.pem, keyFile: no-key.pem }\n`;
    const listener = check('tls-listener.yaml', text);
    expect(listener.code).toBe(2);
    expect(listener.err).toContain(`${listener.path}:3:39: proxy.tls.keyFile: cannot read no-key.pem (ENOENT)`);
    const fromEnv = check('tls-env.yaml', text, { MUSTER_PROXY_TLS_KEY_FILE: join(dir, 'env-key.pem') });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.err).toContain(`MUSTER_PROXY_TLS_KEY_FILE: cannot read ${join(dir, 'env-key.pem')} (ENOENT)`);
  });

  it('an advertised address that drivers could not dial (a host name, 0.0.0.0) is refused at its place', () => {
    for (const bad of ['proxy.example.com', '999.1.1.1', '0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0', '1:2:3']) {
      const r = check('advertise.yaml', `${proxy}  advertise: { address: "${bad}" }\n`);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${r.path}:3:25: proxy.advertise.address: ${JSON.stringify(bad)} is not an IP address drivers can dial`);
    }
    for (const good of ['10.0.0.5', 'fd00::5', 'fe80::1%eth0', '::ffff:10.0.0.1']) {
      expect(check('advertise-ok.yaml', `${proxy}  advertise: { address: "${good}" }\n`).code).toBe(0);
    }
  });

  it("static members listed for another service than the proxy's are refused (the proxy would see only itself)", () => {
    const r = check('service.yaml', `${members.replace('  options:\n', '  options:\n    service: other\n')}${proxy}`);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      `${r.path}:4:14: discovery.options.service: the members are listed for service 'other', but the proxy's service is 'muster-cql-proxy'`,
    );
    const same = check('same-service.yaml', `${members.replace('  options:\n', '  options:\n    service: muster-cql-proxy\n')}${proxy}`);
    expect(same.code).toBe(0);
  });

  it("the HTTP endpoints on the CQL listener's port of one address are refused at proxy.http.port", () => {
    const r = check('ports.yaml', `${proxy}  listen: { port: 9042 }\n  http: { host: 0.0.0.0, port: 9042 }\n`);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.path}:4:32: proxy.http.port: 9042 is the CQL listener's port too`);
    expect(
      check('ports-apart.yaml', `${proxy}  listen: { host: 127.0.0.2, port: 9042 }\n  http: { host: 127.0.0.3, port: 9042 }\n`).code,
    ).toBe(0);
  });

  it('an unknown top-level section (heartbeats:) is an error, never ignored', () => {
    const r = check('sections.yaml', `${members}heartbeats: { adapter: static }\n${proxy}`);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${r.path}:8:13: heartbeats: unknown section; expected one of version, discovery, lock, heartbeat, proxy`);
  });

  it('two members with one id are refused before anything starts', () => {
    const r = check('dup.yaml', `${members.replace('id: proxy-1', 'id: proxy-0').replace('self: proxy-1', 'self: { index: 0 }')}${proxy}`);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/dup\.yaml:6:15: discovery\.options\.members\[1\]\.id: member 0 has the id 'proxy-0' too; ids must be unique/);
  });

  it('prints the instanceId the run uses (self), the tokens section, and every port with its defaults', () => {
    const r = check('ok.yaml', `${members}heartbeat: { adapter: static }\n${proxy}`);
    // Valid, with the one warning the run also gives: a static heartbeat store beside peers (check-warnings.test.ts).
    expect(r.err).toMatch(/^muster-cql-proxy: warning: heartbeat adapter 'static' keeps heartbeats inside this process[^\n]*\n$/);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.out) as {
      discovery: { adapter: string; options: { self: string } };
      heartbeat: { adapter: string; options: { scope: string } };
      proxy: { instanceId: string; tokens: { mode: string; perInstance: number } };
    };
    expect(printed.proxy.instanceId).toBe('proxy-1');
    expect(printed.proxy.instanceId).not.toBe(hostname());
    expect(printed.proxy.tokens).toEqual({ mode: 'stable', perInstance: 8 });
    expect(printed.heartbeat).toEqual({ adapter: 'static', options: { scope: 'default', maxPayloadBytes: 4096 } });
  });

  it('redacts the values the schemas mark secret (proxy password, Consul token), and nothing by key name', () => {
    const r = check(
      'secrets.yaml',
      `discovery:
  adapter: consul
  options: { address: 127.0.0.1:8500, token: "\${TOKEN}" }
${proxy.replace('] }', '], username: cassandra, password: "${PASSWORD}" }')}  tokens: { mode: zdm }
`,
      { TOKEN: 'c0nsul-t0ken-value', PASSWORD: 's3cret-value' },
    );
    expect(r.err).toBe('');
    const printed = JSON.parse(r.out) as {
      discovery: { options: { token: string } };
      proxy: { backend: { password: string; username: string }; tokens: { mode: string } };
    };
    expect(printed.discovery.options.token).toBe('<redacted>');
    expect(printed.proxy.backend.password).toBe('<redacted>');
    expect(printed.proxy.backend.username).toBe('cassandra');
    expect(printed.proxy.tokens.mode).toBe('zdm');
    expect(r.out).not.toContain('s3cret-value');
    expect(r.out).not.toContain('c0nsul-t0ken-value');
  });

  it('never echoes a secret in an error (an unquoted numeric password)', () => {
    const r = check('number.yaml', `${members}proxy:\n  backend: { contactPoints: [127.0.0.1:9142], password: 987654321 }\n`);
    expect(r.code).toBe(2);
    expect(r.err).toContain('proxy.backend.password: expected a string, got a number (not shown: secret)');
    expect(r.err).not.toContain('987654321');
  });
});
