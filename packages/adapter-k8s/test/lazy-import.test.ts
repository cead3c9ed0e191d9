// What a process loads for the kubernetes adapter, recorded in a real Node process against the
// built packages: never @kubernetes/client-node for a token user, and the YAML parser only to read
// a kubeconfig.
import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const dir = mkdtempSync(join(tmpdir(), 'muster-k8s-lazy-'));

function loadedBy(script: string, options: Record<string, unknown> = {}): string[] {
  const log = join(dir, `imports-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(log, '');
  execFileSync(process.execPath, ['--import', join(fixtures, 'load-record.mjs'), join(fixtures, script), JSON.stringify(options)], {
    env: { ...process.env, MUSTER_IMPORT_LOG: log, NODE_OPTIONS: '' },
    cwd: fixtures,
  });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const kubeconfig = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfig,
  'current-context: x\nclusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]\nusers: [{ name: u, user: { token: t } }]\ncontexts: [{ name: x, context: { cluster: c, user: u } }]\n',
);

describe('what the kubernetes adapter loads', () => {
  test('a token kubeconfig: the adapter and the YAML parser, not @kubernetes/client-node', () => {
    const urls = loadedBy('first-list.mjs', { kubeconfig });
    expect(urls.some((u) => u.includes('/adapter-k8s/'))).toBe(true);
    expect(urls.some((u) => u.includes('/node_modules/yaml/'))).toBe(true);
    expect(urls.filter((u) => u.includes('@kubernetes/client-node'))).toEqual([]);
  });

  test('importing the adapter loads neither client-node nor the YAML parser', () => {
    const urls = loadedBy('import-only.mjs');
    expect(urls.some((u) => u.includes('/adapter-k8s/'))).toBe(true);
    expect(urls.filter((u) => u.includes('@kubernetes/client-node') || u.includes('/node_modules/yaml/'))).toEqual([]);
  });
});
