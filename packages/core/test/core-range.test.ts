// An adapter declares the @muster/core range it was built for; the runtime refuses it in another core.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdapterVersionError, createMuster, MusterError } from '@muster/core';
import { defineAdapter, s } from '@muster/core/adapter';
import { musterCoreVersion } from '../src/version.js';
import { parseRange, parseVersion } from '../src/runtime/semver-range.js';

const ours: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function builtFor(core: string | undefined) {
  return defineAdapter({
    name: 'ranged',
    options: s.object({}),
    ...(core === undefined ? {} : { core }),
    discovery: () => ({
      list: async () => [],
      watch: () => ({ [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }) }),
      register: async () => undefined,
      deregister: async () => undefined,
      close: async () => undefined,
    }),
  });
}

describe('an adapter built for another core', () => {
  it('is refused at load with MUSTER_ADAPTER_VERSION, naming both versions and what to do', async () => {
    const error = await createMuster({ discovery: { adapter: 'old' } }, { adapters: { old: builtFor('^99.0.0') } }).catch(
      (e: unknown) => e,
    );
    expect(MusterError.is(error, 'MUSTER_ADAPTER_VERSION')).toBe(true);
    expect(error).toBeInstanceOf(AdapterVersionError);
    expect(error).toMatchObject({ specifier: 'old', range: '^99.0.0', coreVersion: ours });
    expect((error as Error).message).toContain(`adapter 'old' was built for @muster/core ^99.0.0, but this is @muster/core ${ours}`);
    expect((error as Error).message).toMatch(/install a version of the adapter built for/);
  });

  it('loaded from a file the config names, the error starts with where the config names it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'muster-range-'));
    const core = new URL('../src/adapter.ts', import.meta.url).pathname;
    writeFileSync(
      join(dir, 'old-adapter.mjs'),
      `import { defineAdapter, s } from ${JSON.stringify(core)};\n` +
        `export default defineAdapter({ name: 'old', core: '>=0.0.1 <0.0.2', options: s.object({}), lock: () => { throw new Error('never') } });\n`,
    );
    writeFileSync(join(dir, 'm.yaml'), 'lock:\n  adapter: ./old-adapter.mjs\n');
    const error = await createMuster(join(dir, 'm.yaml')).catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_ADAPTER_VERSION')).toBe(true);
    expect((error as Error).message).toMatch(
      /m\.yaml:2:12: lock\.adapter: adapter '\.\/old-adapter\.mjs' was built for @muster\/core >=0\.0\.1 <0\.0\.2/,
    );
  });

  it('a range that is no range is an invalid adapter', async () => {
    const error = await createMuster({ discovery: { adapter: 'odd' } }, { adapters: { odd: builtFor('latest') } }).catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_ADAPTER_INVALID')).toBe(true);
    expect((error as Error).message).toMatch(/declares core: "latest", which is no range Muster reads; write one such as '\^/);
  });

  it('an adapter built for this core, or declaring nothing, loads', async () => {
    for (const core of [`^${ours}`, `>=${ours}`, '*', undefined]) {
      const muster = await createMuster({ discovery: { adapter: 'ok' } }, { adapters: { ok: builtFor(core) } });
      await muster.close();
    }
  });

  it('the built-in adapters declare a range that holds this core', async () => {
    for (const pkg of ['@muster/adapter-static', '@muster/adapter-k8s', '@muster/adapter-consul']) {
      const { default: adapter } = (await import(pkg)) as { default: { core?: string } };
      expect(adapter.core).toBeDefined();
      expect(parseRange(adapter.core!)!(parseVersion(ours)!)).toBe(true);
    }
  });
});

it("the version the check uses is package.json's (a version bump must update src/version.ts)", () => {
  expect(musterCoreVersion).toBe(ours);
});

describe('ranges', () => {
  const cases: [range: string, inside: string[], outside: string[]][] = [
    ['^1.2.3', ['1.2.3', '1.9.0'], ['1.2.2', '2.0.0', '2.0.0-rc.1', '1.2.3-rc.1']],
    ['^0.1.0', ['0.1.0', '0.1.9'], ['0.2.0', '0.0.9']],
    ['^0.0.3', ['0.0.3'], ['0.0.4']],
    ['^0.1', ['0.1.0', '0.1.7'], ['0.2.0']],
    ['^1', ['1.0.0', '1.99.0'], ['2.0.0', '0.9.9']],
    ['~1.2.3', ['1.2.3', '1.2.9'], ['1.3.0']],
    ['~1', ['1.5.0'], ['2.0.0']],
    ['>= 0.1.0 <0.3.0', ['0.1.0', '0.2.9'], ['0.3.0', '0.0.1']],
    ['>0.1.0 <=0.2.0', ['0.1.1', '0.2.0'], ['0.1.0', '0.2.1']],
    ['1.2.3', ['1.2.3', '1.2.3+build.7'], ['1.2.4']],
    ['^0.1.0 || ^1.0.0', ['0.1.5', '1.4.0'], ['0.2.0', '2.0.0']],
    ['*', ['0.0.0', '9.9.9'], []],
  ];
  it.each(cases)('%s', (range, inside, outside) => {
    const test = parseRange(range)!;
    expect(test).toBeDefined();
    for (const v of inside) expect([v, test(parseVersion(v)!)]).toEqual([v, true]);
    for (const v of outside) expect([v, test(parseVersion(v)!)]).toEqual([v, false]);
  });

  it('refuses what it does not read', () => {
    for (const range of ['', 'latest', '>=1.2', '1.2.3 - 2.0.0', '^1.2.3-rc.1', '^01.2.3', '||', 'next || ^1.0.0']) {
      expect([range, parseRange(range)]).toEqual([range, undefined]);
    }
  });
});
