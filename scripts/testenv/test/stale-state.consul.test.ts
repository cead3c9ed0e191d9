// `testenv up` after a reboot: the state file still names a server whose processes are gone. It
// must start the server again, not report it as "already up" (which sent every test to a dead port).
import { describe, it, expect, afterAll } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testServer } from '../state.mjs';

const cli = join(process.cwd(), 'scripts/testenv/cli.mjs');
const consul = testServer('consul');
const dir = mkdtempSync(join(tmpdir(), 'muster-stale-state-'));
const env = { ...process.env, MUSTER_TESTENV_DIR: dir };
const testenv = (...args: string[]) =>
  execFileSync(process.execPath, [cli, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const readEntry = () => JSON.parse(testenv('status')).consul as { pids: number[]; url: string } | undefined;

afterAll(() => {
  spawnSync(process.execPath, [cli, 'down', 'consul'], { env });
  rmSync(dir, { recursive: true, force: true });
});

describe.each(consul ? ['consul'] : [])('testenv up with a state file left behind (%s)', () => {
  it('starts a server whose recorded processes are gone instead of calling it up', async () => {
    const gone = spawnSync('true').pid; // has exited: its pid names no live process
    writeFileSync(
      join(dir, 'state.json'),
      JSON.stringify({ consul: { name: 'consul', url: 'http://127.0.0.1:1', pids: [gone], logs: [] } }),
    );
    testenv('up', 'consul');
    const entry = readEntry();
    expect(entry?.pids).not.toContain(gone);
    const leader = await fetch(`${entry!.url}/v1/status/leader`);
    expect(leader.status).toBe(200);
    // A second `up` sees the live processes and leaves them alone.
    const again = spawnSync(process.execPath, [cli, 'up', 'consul'], { env, encoding: 'utf8' });
    expect(again.stderr + again.stdout).toMatch(/already up/);
    expect(readEntry()?.pids).toEqual(entry?.pids);
  }, 60_000);
});
