// The handler bundled with esbuild with only the static adapter: the Kubernetes client and adapter
// are not in it, and it runs from a folder with no node_modules above it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { bundle, mentions } from '../../../bench/serverless/bundle.mjs';

const here = dirname(fileURLToPath(import.meta.url));

describe('serverless bundle', () => {
  test('static bundle: no Kubernetes code, runs standalone', async () => {
    if (!existsSync(join(here, '..', 'dist', 'handler.js'))) throw new Error('examples/serverless/dist is missing: run `npx tsc -b` first');
    const b = (await bundle('static')) as { outdir: string; inputs: string[] };
    expect(mentions(b.inputs, '@kubernetes/client-node')).toEqual([]);
    expect(mentions(b.inputs, 'adapter-k8s')).toEqual([]);
    expect(mentions(b.inputs, 'adapter-static').length).toBeGreaterThan(0);
    const run = spawnSync(
      process.execPath,
      [join(here, '..', '..', '..', 'bench', 'serverless', 'invoke.mjs'), join(b.outdir, 'handler.mjs')],
      {
        encoding: 'utf8',
        cwd: b.outdir,
        env: { ...process.env, MUSTER_ADAPTER: './adapter-static.mjs', NODE_PATH: '' },
        timeout: 15_000,
      },
    );
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toMatchObject({ endpoints: ['orders-0', 'orders-1'], cold: true });
  }, 30_000);

  test('the check sees the Kubernetes client when a bundle does select it (control)', async () => {
    const b = (await bundle('kubernetes')) as { inputs: string[] };
    expect(mentions(b.inputs, '@kubernetes/client-node').length).toBeGreaterThan(0);
  }, 60_000);
});
