// The core conformance suites against the real Consul dev agent (`npm run testenv -- up consul`).
// The agent runs with session_ttl_min = 1s, so the suites can use short ttls; lock-delay is 0 here
// (lock.consul.test.ts covers a non-zero one).
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import Consul from 'consul';
import { createMuster, type Muster } from '@muster/core';
import { discoveryConformance, heartbeatConformance, lockConformance, uniqueName, type DiscoveryControl } from '@muster/core/testing';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { proxyFaults, proxyHang } from '../../../scripts/testenv/proxy-faults.mjs';
import { startTcpProxy, type TcpProxy } from '../../../scripts/testenv/tcp-proxy.mjs';

interface ConsulEntry {
  address: string;
  url: string;
}

const entry = testServer<ConsulEntry>('consul');
const runner = { describe: entry ? describe : describe.skip, test };
let musters: Muster[] = [];
// The clients under test reach the agent through a loopback TCP proxy, so the suites can cut them
// off (outage), break every connection (restart) or hold every byte back (hang) without touching
// the shared agent; the suite's own operator client goes direct.
let proxy: TcpProxy | undefined;
beforeAll(async () => {
  if (!entry) return;
  const [host, port] = entry.address.split(':');
  proxy = await startTcpProxy({ target: { host: host!, port: Number(port) } });
});
afterAll(async () => {
  await Promise.allSettled(musters.map((m) => m.close()));
  await proxy?.close();
});

async function port(name: 'discovery' | 'lock' | 'heartbeat', options: Record<string, unknown> = {}): Promise<Muster> {
  const muster = await createMuster({
    [name]: { adapter: 'consul', options: { address: entry!.address, minSessionTtl: '1s', lockDelay: '0s', watchWait: '10s', ...options } },
  });
  musters.push(muster);
  return muster;
}

const hang = { begin: () => proxyHang(proxy!).begin(), end: () => proxyHang(proxy!).end() };

lockConformance(runner, {
  name: 'consul',
  ttl: 2000,
  factory: async () => (await port('lock', { address: proxy!.address })).lock,
  hang,
});

lockConformance(runner, {
  name: 'consul (sessionBehavior: delete)',
  ttl: 2000,
  contenders: 3,
  factory: async () => (await port('lock', { sessionBehavior: 'delete', address: proxy!.address })).lock,
  hang,
});

heartbeatConformance(runner, {
  name: 'consul',
  ttl: 1500,
  propagation: 5000,
  factory: async () => (await port('heartbeat', { removeAfterTtls: 6, address: proxy!.address })).heartbeat,
  hang,
});

discoveryConformance(runner, {
  name: 'consul',
  capabilities: { register: true },
  faults: { outage: true, restart: true },
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
      ...proxyFaults(proxy!),
      // An operator's deregister: the agent forgets the service and its TTL check.
      forget: async (id) => void (await consul.agent.service.deregister({ id })),
      cleanup: async () => {
        proxy!.refuse(false);
        await Promise.allSettled([...ids].map((id) => consul.agent.service.deregister({ id })));
        await Promise.allSettled(musters.map((m) => m.close()));
        musters = [];
      },
    };
  },
  // checkTtl 1.5 s: the registration is renewed (and restored when forgotten) every 0.5 s.
  factory: async () => (await port('discovery', { address: proxy!.address, checkTtl: '1500ms' })).discovery,
});
