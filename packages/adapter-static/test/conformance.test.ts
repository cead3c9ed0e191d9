import { describe, test } from '@jest/globals';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
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
  propagation: 3000,
  async service(): Promise<DiscoveryControl> {
    const file = join(dir, `members-${Math.random().toString(36).slice(2)}.yaml`);
    const members = new Map<string, { id: string; address: string; port: number; ready: boolean }>();
    const write = () => {
      const tmp = `${file}.tmp`;
      writeFileSync(tmp, `members: ${JSON.stringify([...members.values()])}\n`);
      renameSync(tmp, file);
    };
    write();
    currentFile = file;
    return {
      service: 'svc',
      add: async (e) => void (members.set(e.id, e), write()),
      setReady: async (id, ready) => void (members.set(id, { ...members.get(id)!, ready }), write()),
      remove: async (id) => void (members.delete(id), write()),
      cleanup: async () => {
        await Promise.all(musters.map((m) => m.close()));
        musters = [];
      },
    };
  },
  factory: async () => (await port('discovery', { file: currentFile })).discovery,
});
