// The core conformance suites against the real Consul dev agent (`npm run testenv -- up consul`).
// The agent runs with session_ttl_min = 1s, so the suites can use short ttls; lock-delay is 0 here
// (lock.consul.test.ts covers a non-zero one).
import { afterAll, describe, test } from '@jest/globals';
import Consul from 'consul';
import { createMuster, type Muster } from '@muster/core';
import { discoveryConformance, heartbeatConformance, lockConformance, uniqueName, type DiscoveryControl } from '@muster/core/testing';
import { testServer } from '../../../scripts/testenv/state.mjs';

interface ConsulEntry {
  address: string;
  url: string;
}

const entry = testServer<ConsulEntry>('consul');
const runner = { describe: entry ? describe : describe.skip, test };
let musters: Muster[] = [];
afterAll(async () => {
  await Promise.allSettled(musters.map((m) => m.close()));
});

async function port(name: 'discovery' | 'lock' | 'heartbeat', options: Record<string, unknown> = {}): Promise<Muster> {
  const muster = await createMuster({
    [name]: { adapter: 'consul', options: { address: entry!.address, minSessionTtl: '1s', lockDelay: '0s', watchWait: '10s', ...options } },
  });
  musters.push(muster);
  return muster;
}

lockConformance(runner, {
  name: 'consul',
  ttl: 2000,
  factory: async () => (await port('lock')).lock,
});

lockConformance(runner, {
  name: 'consul (sessionBehavior: delete)',
  ttl: 2000,
  contenders: 3,
  factory: async () => (await port('lock', { sessionBehavior: 'delete' })).lock,
});

heartbeatConformance(runner, {
  name: 'consul',
  ttl: 1500,
  propagation: 5000,
  factory: async () => (await port('heartbeat', { removeAfterTtls: 6 })).heartbeat,
});

discoveryConformance(runner, {
  name: 'consul',
  propagation: 5000,
  async service(): Promise<DiscoveryControl> {
    // node-consul plays the operator: an independent client registering services and checks.
    const consul = new Consul({ host: '127.0.0.1', port: Number(new URL(entry!.url).port) });
    const service = uniqueName('muster-conformance');
    const ids = new Set<string>();
    return {
      service,
      add: async (e) => {
        ids.add(e.id);
        await consul.agent.service.register({
          name: service,
          id: e.id,
          address: e.address,
          port: e.port,
          check: { name: 'conformance', ttl: '10m', timeout: '5s', status: e.ready ? 'passing' : 'critical' },
        });
      },
      setReady: async (id, ready) => {
        if (ready) await consul.agent.check.pass({ id: `service:${id}` });
        else await consul.agent.check.fail({ id: `service:${id}` });
      },
      remove: async (id) => {
        ids.delete(id);
        await consul.agent.service.deregister({ id });
      },
      cleanup: async () => {
        await Promise.allSettled([...ids].map((id) => consul.agent.service.deregister({ id })));
        await Promise.allSettled(musters.map((m) => m.close()));
        musters = [];
      },
    };
  },
  factory: async () => (await port('discovery')).discovery,
});
