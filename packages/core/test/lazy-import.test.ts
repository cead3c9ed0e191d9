import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Runs in a real Node process (not jest's module registry) against the built packages, so what is
// recorded is what a user's process would load.
const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

function loadedBy(args: string[], script = 'static-first-list.mjs'): string[] {
  const log = join(mkdtempSync(join(tmpdir(), 'muster-imports-')), 'imports.log');
  writeFileSync(log, '');
  execFileSync(process.execPath, ['--import', join(fixtures, 'record-imports.mjs'), join(fixtures, script), ...args], {
    env: { ...process.env, MUSTER_IMPORT_LOG: log, NODE_OPTIONS: '' },
    cwd: fixtures,
  });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

describe('only what the config selects is loaded', () => {
  it('a static config object loads neither other adapters, their clients, nor the YAML parser', () => {
    const urls = loadedBy([]);
    expect(urls.some((u) => u.includes('/adapter-static/'))).toBe(true);
    for (const unwanted of [
      '/adapter-k8s/',
      '/adapter-consul/',
      '@kubernetes/client-node',
      '/node_modules/consul/',
      '/node_modules/yaml/',
      '/cql-proxy/',
      // Nothing of inversify (nor its reflect-metadata) for an application that never asks for a container.
      '/node_modules/inversify/',
      '/node_modules/@inversifyjs/',
      '/node_modules/reflect-metadata/',
      '/core/dist/inversify/',
    ]) {
      expect(urls.filter((u) => u.includes(unwanted))).toEqual([]);
    }
  });

  it('a YAML file loads the parser, and still no unselected adapter', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'muster-lazy-')), 'm.yaml');
    writeFileSync(file, 'discovery:\n  adapter: static\n  options: { members: [] }\n');
    const urls = loadedBy([file]);
    expect(urls.some((u) => u.includes('/node_modules/yaml/'))).toBe(true);
    for (const unwanted of ['/adapter-k8s/', '/adapter-consul/', '@kubernetes/client-node', '/node_modules/consul/']) {
      expect(urls.filter((u) => u.includes(unwanted))).toEqual([]);
    }
  });
});

describe('an application with its own inversify container', () => {
  it('loads one build of inversify, the one its own import gets, and Muster binds into it', () => {
    const urls = loadedBy([], 'inversify-app.mjs');
    const inversify = urls.filter((u) => u.includes('/node_modules/inversify/'));
    expect(inversify.some((u) => u.includes('/inversify/lib/esm/'))).toBe(true);
    // A second build (the CommonJS one, as require() loads it) is a second Container class: instanceof fails.
    expect(inversify.filter((u) => !u.includes('/inversify/lib/esm/'))).toEqual([]);
    expect(urls.filter((u) => u.includes('/@inversifyjs/') && u.includes('/lib/cjs/'))).toEqual([]);
  });
});
