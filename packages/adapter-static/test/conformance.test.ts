import { describe, test } from '@jest/globals';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Discovery, Muster } from '@muster/core';
import { createDiscovery, createHeartbeatStore, createLock, type DiscoveryBackend } from '@muster/core/adapter';
import { discoveryConformance, heartbeatConformance, lockConformance, type DiscoveryControl } from '@muster/core/testing';
import { StaticDiscoveryBackend } from '../src/discovery.js';
import { StaticHeartbeatBackend } from '../src/heartbeat.js';
import { StaticLockBackend } from '../src/lock.js';
import { Gate, gatedHeartbeatBackend, gatedLockBackend } from './gated-backends.js';

const runner = { describe, test };
const dir = mkdtempSync(join(tmpdir(), 'muster-static-'));
// Everything a test opened, closed by the discovery cases' cleanup.
let opened: Array<Pick<Muster, 'close'>> = [];

// Lock and heartbeat clients built as the adapter builds them (src/index.ts), with a gate between
// client and table, so the suites can make the backend hang (an in-process table has no connection).
const gate = new Gate();

lockConformance(runner, {
  name: 'static',
  ttl: 300,
  factory: () => createLock(gatedLockBackend(new StaticLockBackend({ scope: 'conformance' }), gate), { timing: { minTtl: 1 } }),
  hang: gate.hang,
});

heartbeatConformance(runner, {
  name: 'static',
  ttl: 300,
  propagation: 2000,
  factory: () => createHeartbeatStore(gatedHeartbeatBackend(new StaticHeartbeatBackend({ scope: 'conformance' }), gate)),
  hang: gate.hang,
});

/**
 * The static backend as its adapter builds it, with every failed read of the members file counted
 * on its way to core (a view carrying an error). The outage case needs that count, and the file's
 * atime cannot give it: noatime mounts never move it.
 */
function countingFailedReads(file: string, failedRead: () => void): Discovery {
  const backend = new StaticDiscoveryBackend({ file, baseDir: dir });
  const counting: DiscoveryBackend = {
    name: backend.name,
    list: (service) => backend.list(service),
    async *views(service, options) {
      for await (const view of backend.views(service, options)) {
        if (!Array.isArray(view)) failedRead();
        yield view;
      }
    },
  };
  return createDiscovery(counting);
}

let current = { file: '', failedRead: () => {} };
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
    let answered = 0;
    current = { file, failedRead: () => void failedReads++ };
    return {
      service: 'svc',
      add: async (e) => void (members.set(e.id, e), write()),
      setReady: async (id, ready) => void (members.set(id, { ...members.get(id)!, ready }), write()),
      remove: async (id) => void (members.delete(id), write()),
      outage: {
        begin: async () => void ((broken = 1), write()),
        end: async () => void ((broken = 0), write()),
        // A failed read is answered with a fresh broken version, which the backend reads (and
        // fails) again: the retries the outage case waits for.
        attempts: () => {
          if (broken > 0 && failedReads > answered) {
            answered = failedReads;
            write();
          }
          return failedReads;
        },
      },
      cleanup: async () => {
        await Promise.all(opened.map((o) => o.close()));
        opened = [];
      },
    };
  },
  factory: () => {
    const discovery = countingFailedReads(current.file, () => current.failedRead());
    opened.push(discovery);
    return discovery;
  },
});
