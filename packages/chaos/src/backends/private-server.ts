import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const testenvCli = fileURLToPath(new URL('../../../../scripts/testenv/cli.mjs', import.meta.url));

export interface PrivateServer<E> {
  readonly entry: E;
  /** The entry after a restart (ports stay, pids change). */
  restart(): Promise<E>;
  close(): Promise<void>;
}

function testenv(dir: string, ...args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [testenvCli, ...args], { env: { ...process.env, MUSTER_TESTENV_DIR: dir } }, (error, _out, stderr) =>
      error
        ? reject(
            new Error(`testenv ${args.join(' ')} (MUSTER_TESTENV_DIR=${dir}) failed: ${stderr.trim() || error.message}`, { cause: error }),
          )
        : resolve(),
    );
  });
}

/**
 * A server of the repo's testenv (`k8s`, `consul`) started for this run only, in its own run
 * folder, so restarting it cannot disturb anyone else's tests on the shared servers. Needs the
 * testenv's build cache (`npm run testenv -- build <name>` once).
 */
export async function startPrivateServer<E>(name: string): Promise<PrivateServer<E>> {
  const dir = mkdtempSync(join(tmpdir(), `muster-chaos-${name}-`));
  const read = () => (JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as Record<string, E>)[name]!;
  try {
    await testenv(dir, 'up', name);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    entry: read(),
    restart: async () => {
      await testenv(dir, 'restart', name);
      return read();
    },
    close: async () => {
      await testenv(dir, 'down', name).finally(() => rmSync(dir, { recursive: true, force: true }));
    },
  };
}
