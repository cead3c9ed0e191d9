import { describe, test } from '@jest/globals';
import { mkdtempSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster, type Muster } from '@muster/core';
import { discoveryConformance, heartbeatConformance, lockConformance, type DiscoveryControl } from '@muster/core/testing';

const runner = { describe, test };
const dir = mkdtempSync(join(tmpdir(), 'muster-static-'));
let musters: Muster[] = [];

async function port<P extends 'discovery' | 'lock' | 'heartbeat'>(name: P, options: Record<string, unknown>) {
  const muster = await createMuster({ [name]: { adapter: 'static', options } });
  musters.push(muster);
  return muster;
}

lockConformance(runner, {
  name: 'static',
  ttl: 300,
  factory: async () => (await port('lock', { scope: 'conformance' })).lock,
});

heartbeatConformance(runner, {
  name: 'static',
  ttl: 300,
  propagation: 2000,
  factory: async () => (await port('heartbeat', { scope: 'conformance' })).heartbeat,
});

let currentFile = '';
discoveryConformance(runner, {
  name: 'static (members file)',
  // Membership is the configuration: nothing to register with, and no server to restart.
  capabilities: { register: false },
  faults: { outage: true, restart: false },
  propagation: 3000,
  async service(): Promise<DiscoveryControl> {
    const file = join(dir, `members-${Math.random().toString(36).slice(2)}.yaml`);
    const members = new Map<string, { id: string; address: string; port: number; ready: boolean }>();
    // The static backend's outage: a members file that does not parse. Changes meanwhile are
    // written broken too (each one a failed re-read), and the next good write ends it.
    let broken = 0;
    let failedReads = 0;
    const write = () => {
      const tmp = `${file}.tmp`;
      writeFileSync(tmp, broken > 0 ? `members: [ {broken ${broken++}\n` : `members: ${JSON.stringify([...members.values()])}\n`);
      renameSync(tmp, file);
    };
    write();
    currentFile = file;
    return {
      service: 'svc',
      add: async (e) => void (members.set(e.id, e), write()),
      setReady: async (id, ready) => void (members.set(id, { ...members.get(id)!, ready }), write()),
      remove: async (id) => void (members.delete(id), write()),
      outage: {
        begin: async () => void ((broken = 1), write()),
        end: async () => void ((broken = 0), write()),
        // A read of the broken file is a failed attempt: the first read after a write moves its
        // atime past its mtime (relatime), and a fresh broken version provokes the next one.
        attempts: () => {
          const { atimeMs, mtimeMs } = statSync(file);
          if (broken > 0 && atimeMs > mtimeMs) {
            failedReads++;
            write();
          }
          return failedReads;
        },
      },
      cleanup: async () => {
        await Promise.all(musters.map((m) => m.close()));
        musters = [];
      },
    };
  },
  factory: async () => (await port('discovery', { file: currentFile })).discovery,
});
