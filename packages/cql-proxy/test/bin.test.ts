// npx muster-cql-proxy right after npm ci (issue 13): npm links a bin only when its file exists,
// and npm ci runs before dist/ is built, so the bin must be a committed file, not dist/cli.js.
import { describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { bin: Record<string, string>; files: string[] };

describe('the muster-cql-proxy bin', () => {
  const bin = pkg.bin['muster-cql-proxy']!;

  it('is a file under version control that ships in the package', () => {
    const tracked = execFileSync('git', ['ls-files', '--error-unmatch', bin], { cwd: pkgDir, encoding: 'utf8' }).trim();
    expect(tracked).toBe(bin.replace(/^\.\//, ''));
    expect(pkg.files).toContain(bin.replace(/^\.\//, '').split('/')[0]);
  });

  it('runs the built CLI, and says how to build when dist/ is missing', () => {
    const built = spawnSync(process.execPath, [join(pkgDir, bin), '--version'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(built.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);

    const fresh = mkdtempSync(join(tmpdir(), 'muster-bin-'));
    mkdirSync(join(fresh, dirname(bin)), { recursive: true });
    copyFileSync(join(pkgDir, bin), join(fresh, bin));
    const unbuilt = spawnSync(process.execPath, [join(fresh, bin), '--help'], {
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(unbuilt.status).toBe(1);
    expect(unbuilt.stderr).toContain('not built yet (no dist/cli.js)');
    expect(unbuilt.stderr).toContain('npm run build');
  });
});
