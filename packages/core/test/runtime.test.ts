import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ConfigError, createMuster, MusterError, type Discovery, type DiscoveryEvent, type Lock, type Muster } from '../src/index.js';
import { defineAdapter, EventChannel, s } from '../src/adapter.js';

const dir = mkdtempSync(join(tmpdir(), 'muster-runtime-'));
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function configError(input: Parameters<typeof createMuster>[0], env: Record<string, string> = {}): Promise<ConfigError> {
  try {
    const m = await createMuster(input, { env });
    await m.close();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const opened: Muster[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((m) => m.close()));
});

describe('createMuster', () => {
  it('loads a YAML file, interpolates the environment and serves the selected ports', async () => {
    const path = file(
      'ok.yaml',
      `version: 1
discovery:
  adapter: static
  options:
    members:
      - id: b
        address: 127.0.0.2
        port: \${PORT}
      - { id: a, address: 127.0.0.1, port: "\${OTHER_PORT:-9042}" }
    self: \${SELF:-a}
lock: { adapter: static }
proxy: { anything: goes }
`,
    );
    const muster = await createMuster(path, { env: { PORT: '9043' } });
    opened.push(muster);
    expect((await muster.discovery.list('any')).map((e) => [e.id, e.port])).toEqual([
      ['a', 9042],
      ['b', 9043],
    ]);
    expect(muster.discovery.self?.id).toBe('a');
    expect(muster.adapters).toEqual({ discovery: 'static', lock: 'static' });
    expect(() => muster.heartbeat).toThrow(/no adapter is configured for heartbeat/);
    expect(muster.config.data.proxy).toEqual({ anything: 'goes' });
  });

  it('a quoted reference stays text as written (digits, "true"); an unquoted one takes the type of its text; integer settings read quoted digits', async () => {
    const path = file(
      'quoted.yaml',
      `discovery:
  adapter: static
  options:
    members:
      - { id: "\${MID}", address: 127.0.0.1, port: "\${PORT}" }
      - id: "\${YES}"
        address: 127.0.0.2
        port: \${PORT}
    self: "\${MID}"
`,
    );
    const muster = await createMuster(path, { env: { MID: '007', YES: 'true', PORT: '9043' } });
    opened.push(muster);
    expect((await muster.discovery.list('any')).map((e) => [e.id, e.port])).toEqual([
      ['007', 9043],
      ['true', 9043],
    ]);
    expect(muster.discovery.self?.id).toBe('007');
    const unquoted = file(
      'unquoted.yaml',
      'discovery:\n  adapter: static\n  options:\n    members:\n      - id: ${MID}\n        address: 127.0.0.1\n        port: 9042\n',
    );
    await expect(createMuster(unquoted, { env: { MID: '007' } })).rejects.toThrow(
      /unquoted.yaml:5:\d+: discovery.options.members\[0\].id: expected a string, got 7 \(YAML reads it unquoted as such: quote it to keep the text\)/,
    );
  });

  it('closes ports in reverse order of creation, and only once', async () => {
    const muster = await createMuster({ lock: { adapter: 'static' }, heartbeat: { adapter: 'static' } });
    const lease = await muster.lock.acquire('closing', { ttl: 60_000 });
    await muster.close();
    await muster.close();
    expect(lease.onLost.aborted).toBe(true);
    await expect(muster.lock.acquire('x')).rejects.toMatchObject({ code: 'MUSTER_CLOSED' });
  });

  it('supports await using', async () => {
    let lock;
    {
      await using muster = await createMuster({ lock: { adapter: 'static' } });
      lock = muster.lock;
    }
    await expect(lock.tryAcquire('after')).rejects.toMatchObject({ code: 'MUSTER_CLOSED' });
  });
});

describe('config errors name file:line:col and the path', () => {
  it('bad YAML', async () => {
    const path = file('bad.yaml', 'discovery:\n  adapter: static\n   options: [\n');
    const error = await configError(path);
    expect(error.message).toMatch(new RegExp(`^${path}:2:12: invalid YAML: Nested mappings`));
    expect(error.line).toBe(2);
  });

  it('a duplicate key', async () => {
    const error = await configError(file('dup.yaml', 'lock:\n  adapter: static\nlock:\n  adapter: static\n'));
    expect(error.message).toMatch(/dup\.yaml:3:1: invalid YAML: Map keys must be unique/);
  });

  it('a document whose aliases expand without bound, at its first alias', async () => {
    const nine = (name: string) => `[${Array(9).fill(`*${name}`).join(', ')}]`;
    const bomb = `a: &a [x, x, x, x, x, x, x, x, x]\nb: &b ${nine('a')}\nc: &c ${nine('b')}\nd: ${nine('c')}\n`;
    const error = await configError(file('bomb.yaml', bomb));
    expect(error.message).toMatch(/bomb\.yaml:2:8: invalid YAML: Excessive alias count/);
  });

  it('a wrong type deep in adapter options', async () => {
    const path = file(
      'types.yaml',
      `discovery:
  adapter: static
  options:
    members:
      - { address: 127.0.0.1, port: 9042 }
      - { address: 127.0.0.2, port: "x" }
`,
    );
    const error = await configError(path);
    expect(error.message).toBe(`${path}:6:37: discovery.options.members[1].port: expected an integer, got "x"`);
    expect(error.path).toBe('discovery.options.members[1].port');
    expect([error.line, error.column]).toEqual([6, 37]);
  });

  it('an unknown option key (a typo is never ignored)', async () => {
    const error = await configError(file('typo.yaml', 'lock:\n  adapter: static\n  options:\n    ttll: 10s\n'));
    expect(error.message).toMatch(/typo\.yaml:4:11: lock\.options\.ttll: unknown key; expected one of/);
  });

  it('a missing environment variable', async () => {
    const error = await configError(file('env.yaml', 'lock:\n  adapter: static\n  options: { holder: "${WHO}" }\n'));
    expect(error.message).toMatch(/env\.yaml:3:22: environment variable WHO is not set/);
  });

  it('an unsupported version', async () => {
    const error = await configError(file('version.yaml', 'version: 2\n'));
    expect(error.message).toMatch(/version\.yaml:1:10: version: unsupported config version 2/);
  });

  it('a section without an adapter, in a config object', async () => {
    const error = await configError({ lock: { options: {} } } as never);
    expect(error.message).toBe('(config object): lock.adapter: is required');
  });

  it('a missing file', async () => {
    const error = await configError(join(dir, 'nope.yaml'));
    expect(error.message).toMatch(/nope\.yaml: cannot read config: no such file/);
  });

  it('an adapter that does not provide the port', async () => {
    const adapter = file(
      'lock-only.mjs',
      `import { defineAdapter, s, createLock } from '@muster/core/adapter';
export default defineAdapter({ name: 'lock-only', options: s.object({}), lock: () => { throw new Error('unused'); } });`,
    );
    const error = await configError(file('wrong-port.yaml', `discovery:\n  adapter: ${adapter}\n`));
    expect(error.message).toMatch(
      /wrong-port\.yaml:2:12: discovery\.adapter: adapter '.*lock-only\.mjs' does not provide discovery; it provides lock/,
    );
  });
});

describe('adapter resolution', () => {
  it('an adapter package that is not installed is named, with the built-ins', async () => {
    const error = await createMuster({ lock: { adapter: 'muster-adapter-nonexistent' } }).catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_ADAPTER_NOT_FOUND')).toBe(true);
    expect((error as Error).message).toMatch(/package muster-adapter-nonexistent is not installed.*static, kubernetes, consul/);
  });

  it('a package found only in the node_modules of the config folder (or above it) is loaded, an ESM-only one (exports with import only) too; the built-ins beside Muster come first', async () => {
    const app = join(dir, 'esm-app');
    const adapterModule = (name: string) =>
      `export default { [Symbol.for('muster.adapter')]: true, name: '${name}', provides: ['lock'], options: { parse: (v) => v ?? {}, jsonSchema: () => ({}) }, lock: () => ({ close: async () => {} }) };\n`;
    const install = (pkg: string, name: string) => {
      const root = join(app, 'node_modules', pkg);
      mkdirSync(join(root, 'dist'), { recursive: true });
      writeFileSync(
        join(root, 'package.json'),
        JSON.stringify({ name: pkg, type: 'module', exports: { '.': { import: './dist/index.js' } } }),
      );
      writeFileSync(join(root, 'dist/index.js'), adapterModule(name));
    };
    install('muster-adapter-esm-only', 'esm-only');
    install('@muster/adapter-static', 'the-app-s-own-static');
    mkdirSync(join(app, 'config'));
    const config = join(app, 'config', 'muster.yaml'); // node_modules is one folder up
    writeFileSync(config, 'lock: { adapter: muster-adapter-esm-only }\n');
    const esm = await createMuster(config);
    opened.push(esm);
    expect(esm.adapters).toEqual({ lock: 'esm-only' });
    writeFileSync(config, 'lock: { adapter: static }\n');
    const own = await createMuster(config);
    opened.push(own);
    expect(own.adapters).toEqual({ lock: 'static' }); // beside Muster: the one built for this core
  });

  it('a relative file: URL names a file beside the config; a config URL that is not file: is a ConfigError', async () => {
    const adapter = file(
      'rel-url.mjs',
      `export default { [Symbol.for('muster.adapter')]: true, name: 'rel-url', provides: ['lock'], options: { parse: (v) => v ?? {}, jsonSchema: () => ({}) }, lock: () => ({ close: async () => {} }) };\n`,
    );
    const muster = await createMuster(file('rel-url.yaml', `lock: { adapter: "file:./${basename(adapter)}" }\n`));
    opened.push(muster);
    expect(muster.adapters).toEqual({ lock: 'rel-url' });
    await expect(createMuster(new URL('http://example.com/muster.yaml'))).rejects.toMatchObject({
      code: 'MUSTER_CONFIG',
      message: expect.stringContaining('a config URL must be a file: URL, got http:'),
    });
  });

  it('a missing adapter file is named', async () => {
    const error = await createMuster({ lock: { adapter: './no-such-adapter.js' } }, { cwd: dir }).catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_ADAPTER_NOT_FOUND')).toBe(true);
    expect((error as Error).message).toContain(join(dir, 'no-such-adapter.js'));
  });

  it('an adapter that fails while loading says which and why', async () => {
    file('broken.mjs', `import 'muster-dependency-that-is-missing';\nexport default {};\n`);
    const error = await createMuster({ lock: { adapter: './broken.mjs' } }, { cwd: dir }).catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_ADAPTER_LOAD')).toBe(true);
    expect((error as Error).message).toMatch(/adapter '\.\/broken\.mjs' .* failed to load: .*muster-dependency-that-is-missing/);
  });

  it('an adapter whose factory throws (an Error, a string) fails with MUSTER_ADAPTER_START naming the adapter, the section and the cause; ports made before it are closed', async () => {
    let closed = 0;
    const lockOk = defineAdapter({
      name: 'lock-ok',
      options: s.object({}),
      lock: () => ({ close: async () => void closed++ }) as unknown as Lock,
    });
    for (const thrown of [new Error('connect ECONNREFUSED 127.0.0.1:1'), 'a string']) {
      const throws = defineAdapter({
        name: 'throws',
        options: s.object({}),
        heartbeat: () => {
          throw thrown;
        },
      });
      const config = file('throws.yaml', 'lock: { adapter: lock-ok }\nheartbeat:\n  adapter: throws\n');
      const error = await createMuster(config, { adapters: { 'lock-ok': lockOk, throws } }).catch((e: unknown) => e);
      expect(MusterError.is(error, 'MUSTER_ADAPTER_START')).toBe(true);
      expect((error as Error).message).toMatch(
        /throws\.yaml:3:\d+: heartbeat\.adapter: adapter 'throws' failed to create the heartbeat port: (connect ECONNREFUSED|a string)/,
      );
      expect((error as Error).cause).toBe(thrown);
    }
    expect(closed).toBe(2);
  });

  it('a module that is not an adapter is refused', async () => {
    file('not-adapter.mjs', `export default { name: 'x' };\n`);
    const error = await createMuster({ lock: { adapter: './not-adapter.mjs' } }, { cwd: dir }).catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_ADAPTER_INVALID')).toBe(true);
  });
});

describe('adapters passed in', () => {
  it('an adapter given in options wins over resolution by name, and nothing is imported for it', async () => {
    let created = 0;
    const bundled = defineAdapter({
      name: 'bundled',
      options: s.object({}),
      discovery: () => {
        created++;
        const discovery: Discovery = {
          list: async () => [],
          watch: () => new EventChannel<DiscoveryEvent>(() => undefined),
          register: async () => undefined,
          deregister: async () => undefined,
          close: async () => undefined,
        };
        return discovery;
      },
    });
    const muster = await createMuster({ discovery: { adapter: 'not-a-real-package' } }, { adapters: { 'not-a-real-package': bundled } });
    await muster.close();
    expect(created).toBe(1);
    expect(muster.adapters.discovery).toBe('bundled');
  });
});
