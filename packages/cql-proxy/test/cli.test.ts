// The command line, run as a user runs it: the built bin in a child process.
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'muster-cli-'));
const run = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, ...env, NODE_OPTIONS: '' } });
  return { code: r.status, out: r.stdout, err: r.stderr };
};
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('muster-cql-proxy', () => {
  it('--check prints the effective config with secrets redacted', () => {
    const config = file(
      'ok.yaml',
      `discovery: { adapter: static, options: { members: [{ id: p0, address: 127.0.0.1, port: 9042 }], self: p0 } }
proxy:
  backend: { contactPoints: ["\${BACKEND}"], username: cassandra, password: "\${PASSWORD}" }
`,
    );
    const r = run(['--check', '--config', config, '--listen', '127.0.0.2:9043'], { BACKEND: '127.0.0.1:9142', PASSWORD: 's3cret' });
    expect(r.code).toBe(0);
    const effective = JSON.parse(r.out) as {
      proxy: { backend: { contactPoints: string[]; password: string }; listen: unknown; instanceId: string };
    };
    expect(effective.proxy.backend.contactPoints).toEqual(['127.0.0.1:9142']);
    expect(effective.proxy.backend.password).toBe('<redacted>');
    expect(r.out).not.toContain('s3cret');
    expect(effective.proxy.listen).toEqual({ host: '127.0.0.2', port: 9043 });
  });

  it('MUSTER_PROXY_* variables set proxy values (typed by the schema), below the flags and above the file', () => {
    const config = file(
      'env.yaml',
      `discovery: { adapter: static, options: { members: [{ id: p0, address: 127.0.0.1, port: 9042 }], self: p0 } }
proxy:
  listen: { port: 9000 }
  http: { port: 9100 }
  backend: { contactPoints: [127.0.0.1:9142] }
`,
    );
    const env = {
      MUSTER_PROXY_LISTEN_PORT: '9555',
      MUSTER_PROXY_HTTP_PORT: '9200',
      MUSTER_PROXY_BACKEND_CONTACT_POINTS: '10.0.0.1:9042, 10.0.0.2',
      MUSTER_PROXY_PEERS_V2: 'false',
      MUSTER_PROXY_EVENTS_DEBOUNCE: '2s',
    };
    const r = run(['--check', '--config', config, '--http', '127.0.0.1:9300'], env);
    expect(r.err).toBe('');
    const { proxy } = JSON.parse(r.out) as {
      proxy: {
        listen: { port: number };
        http: { port: number };
        backend: { contactPoints: string[] };
        peersV2: boolean;
        events: { debounce: number };
      };
    };
    expect(proxy.listen.port).toBe(9555);
    expect(proxy.http.port).toBe(9300); // the flag wins
    expect(proxy.backend.contactPoints).toEqual(['10.0.0.1:9042', '10.0.0.2']);
    expect(proxy.peersV2).toBe(false);
    expect(proxy.events.debounce).toBe(2000);

    const bad = (extra: Record<string, string>) => run(['--check', '--config', config], extra);
    expect(bad({ MUSTER_PROXY_LISTEN_PROT: '1' }).err).toMatch(/MUSTER_PROXY_LISTEN_PROT: no proxy setting is called that/);
    expect(bad({ MUSTER_PROXY_LISTEN_PORT: 'abc' }).err).toMatch(/MUSTER_PROXY_LISTEN_PORT: expected a number, got "abc"/);
    const tooBig = bad({ MUSTER_PROXY_LISTEN_PORT: '70000' });
    expect(tooBig.code).toBe(2);
    // The variable is the place: no "(config object)" in front of it.
    expect(tooBig.err).toBe('muster-cql-proxy: MUSTER_PROXY_LISTEN_PORT: must be at most 65535, got 70000\n');
    expect(bad({ MUSTER_PROXY_BACKEND: 'x' }).err).toMatch(
      /MUSTER_PROXY_BACKEND: expected one of its settings \(.*MUSTER_PROXY_BACKEND_CONTACT_POINTS/,
    );
  });

  it('a bad config exits 2 naming file:line:col and the path of every problem', () => {
    const config = file(
      'bad.yaml',
      'discovery: { adapter: static, options: { members: [] } }\nproxy:\n  listen: { port: 70000 }\n  backend: { contactPoints: [] }\n',
    );
    const r = run(['--check', '--config', config]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${config}:3:19: proxy.listen.port: must be at most 65535, got 70000`);
    expect(r.err).toContain('4:29 proxy.backend.contactPoints: expected at least 1 item');
  });

  it('a missing proxy section and a missing --config are explained', () => {
    const r = run(['--check', '--config', file('none.yaml', 'discovery: { adapter: static }\n')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/none\.yaml:1:1: proxy: is required/);
    expect(run([]).code).toBe(2);
  });

  it('--schema prints a JSON Schema editors can use; --help and --version answer', () => {
    const schema = JSON.parse(run(['--schema']).out) as { type: string; required: string[]; properties: Record<string, unknown> };
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(['backend']);
    expect(Object.keys(schema.properties)).toContain('tokens');
    expect(run(['--help']).out).toMatch(/Usage: muster-cql-proxy --config/);
    expect(run(['--version']).out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
