// Restarts a Consul agent under a running watch, a held lock, a registration and a heartbeat, and
// shows convergence: the watch reports degraded (keeping the last endpoints) then recovered and the
// difference, the keeper registers the service again, the lease's onLost fires, and locking and
// beating work again afterwards; a paused agent (SIGSTOP) costs the lease through the renew
// deadline. It runs its own dev agent (built by testenv, started here), so
// restarting it cannot disturb the shared `consul` server other test files use.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createMuster, type DiscoveryEvent, type Muster } from '@muster/core';
import { eventually, nextWithin, uniqueName } from '@muster/core/testing';
import { testServer } from '../../../scripts/testenv/state.mjs';
// Plain .mjs without types; only up, restart and down are used.
import { downAgent, restartAgent, upAgent } from '../../../scripts/testenv/consul/agent.mjs';

interface AgentEntry {
  address: string;
  url: string;
  pids: number[];
}

const shared = testServer<AgentEntry>('consul');
let agent: AgentEntry | undefined;
const musters: Muster[] = [];

const options = () => ({ address: agent!.address, minSessionTtl: '1s', lockDelay: '0s', watchWait: '10s', checkTtl: '1500ms' });

(shared ? describe : describe.skip)('Consul agent restart', () => {
  beforeAll(async () => {
    agent = (await upAgent('consul-adapter-restart-test')) as unknown as AgentEntry;
  }, 90_000);

  afterAll(async () => {
    await Promise.allSettled(musters.map((m) => m.close()));
    if (agent) await downAgent(agent);
  }, 30_000);

  test('watch, registration, lock and heartbeat converge after the agent restarts', async () => {
    const service = uniqueName('muster-restart');
    const self = await createMuster({
      discovery: { adapter: 'consul', options: options() },
      lock: { adapter: 'consul', options: options() },
      heartbeat: { adapter: 'consul', options: options() },
    });
    const watcher = await createMuster({ discovery: { adapter: 'consul', options: options() } });
    musters.push(self, watcher);

    await self.discovery.register({ service, id: 'self', address: '127.0.0.1', port: 9042 });
    // A peer registered by someone else: the restarted dev agent forgets it, so it must be removed.
    const put = (path: string, body: unknown) => fetch(`${agent!.url}${path}`, { method: 'PUT', body: JSON.stringify(body) });
    await put('/v1/agent/service/register', { Name: service, ID: 'peer', Port: 9043, Check: { TTL: '10m', Status: 'passing' } });
    const events: DiscoveryEvent[] = [];
    const watch = watcher.discovery.watch(service)[Symbol.asyncIterator]();
    const snapshot = await nextWithin(watch, 5000, 'snapshot');
    expect(snapshot.endpoints.map((e) => e.id)).toEqual(['peer', 'self']);
    const collecting = (async () => {
      for (;;) {
        const r = await watch.next();
        if (r.done) return;
        events.push(r.value);
      }
    })();

    const lease = await self.lock.acquire(uniqueName('restart-lock'), { ttl: 3000 });
    await self.heartbeat.beat('restart-member', { n: 1 }, { ttl: 5000 });

    const restarted = Date.now();
    agent = (await restartAgent(agent)) as AgentEntry;
    const downFor = Date.now() - restarted;

    // The lease cannot have survived: either renewals failed past the renew deadline, or the
    // restarted agent answered 404 for the session.
    await eventually('onLost to fire', async () => (lease.onLost.aborted ? true : undefined), 15_000);
    expect(String((lease.onLost.reason as Error).message)).toMatch(/renew deadline|session .* is gone/);

    const converged = await eventually(
      'the watch to converge on the re-registered self only',
      async () => {
        const last = events.at(-1);
        return last && last.endpoints.length === 1 && last.endpoints[0]!.id === 'self' && last.endpoints[0]!.ready ? last : undefined;
      },
      30_000,
    );
    expect(converged.endpoints.map((e) => e.id)).toEqual(['self']);
    const degraded = events.find((e) => e.type === 'degraded');
    expect(degraded?.endpoints.map((e) => e.id)).toEqual(['peer', 'self']); // last known, never empty
    const types = events.map((e) => e.type);
    expect(types.indexOf('recovered')).toBeGreaterThan(types.indexOf('degraded'));
    expect(events.some((e) => e.type === 'removed' && e.endpoint.id === 'peer')).toBe(true);
    expect(await watcher.discovery.list(service)).toEqual(converged.endpoints);

    // Locking and beating work again against the restarted agent.
    const again = await self.lock.acquire(lease.name, { ttl: 3000, wait: 10_000 });
    await again.release();
    await self.heartbeat.beat('restart-member', { n: 2 }, { ttl: 5000 });
    expect((await self.heartbeat.get('restart-member'))?.payload).toEqual({ n: 2 });

    await watch.return?.();
    await collecting;
    console.log(`agent restart took ${downFor} ms; events: ${types.join(', ')}`);
  }, 90_000);

  test('a paused agent (SIGSTOP) loses the lease through the renew deadline; after SIGCONT the lock changes hands', async () => {
    const m = await createMuster({ lock: { adapter: 'consul', options: options() } });
    musters.push(m);
    const ttl = 3000;
    const lease = await m.lock.acquire(uniqueName('paused'), { ttl });
    const pid = agent!.pids[0]!;
    process.kill(pid, 'SIGSTOP');
    let lostAfter = 0;
    try {
      const paused = Date.now();
      await eventually('onLost to fire while the agent is paused', async () => (lease.onLost.aborted ? true : undefined), ttl * 2);
      lostAfter = Date.now() - paused;
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(String((lease.onLost.reason as Error).message)).toMatch(/renew deadline/);
    // Lost within the renew deadline (2/3 of the ttl) of the last confirmed renewal, so before the ttl.
    expect(lostAfter).toBeLessThan(ttl);
    const next = await m.lock.acquire(lease.name, { ttl, wait: 20_000 });
    expect(next.token).toBeGreaterThan(lease.token);
    await next.release();
    console.log(`lease lost ${lostAfter} ms into the pause`);
  }, 40_000);
});
