// Fencing tokens across Consul restarts, on PRIVATE agents (restarting the shared one would disturb
// other test files): a -dev agent loses all its state on restart, a persistent one (the
// consul-persist profile) keeps it. Either way, tokens handed out afterwards are above all before:
// after the data loss through the acquirer's wall clock, after the ordinary restart through the
// token key that survived (shown with a contender whose wall clock reads 0).
import { afterEach, describe, expect, test } from '@jest/globals';
import { createMuster, type Lock, type Muster } from '@muster/core';
import { createLock } from '@muster/core/adapter';
import { uniqueName } from '@muster/core/testing';
import { testServer } from '../../../scripts/testenv/state.mjs';
// Plain .mjs without types; only up, restart and down are used.
import { downAgent, restartAgent, upAgent } from '../../../scripts/testenv/consul/agent.mjs';
import { ConsulClient } from '../src/client.js';
import { ConsulLockBackend } from '../src/lock.js';

interface AgentEntry {
  address: string;
  url: string;
  pids: number[];
}

// The shared agent only tells whether Consul is built and the testenv is in use here.
const shared = testServer('consul');
let agent: AgentEntry | undefined;
let musters: Muster[] = [];
let locks: Lock[] = [];

afterEach(async () => {
  await Promise.allSettled([...musters.map((m) => m.close()), ...locks.map((l) => l.close())]);
  musters = [];
  locks = [];
  if (agent) await downAgent(agent);
  agent = undefined;
}, 30_000);

async function lockPort(): Promise<Lock> {
  const muster = await createMuster({
    lock: { adapter: 'consul', options: { address: agent!.address, minSessionTtl: '1s', lockDelay: '0s' } },
  });
  musters.push(muster);
  return muster.lock;
}

/** Acquires and releases in turn; returns the tokens in order. */
async function handOver(name: string, contenders: Lock[]): Promise<bigint[]> {
  const tokens: bigint[] = [];
  for (const lock of contenders) {
    const lease = await lock.acquire(name, { ttl: 2000, wait: 10_000 });
    tokens.push(lease.token);
    await lease.release();
  }
  return tokens;
}

const max = (xs: bigint[]) => xs.reduce((x, y) => (y > x ? y : x));
const tokenKey = async (name: string) => (await fetch(`${agent!.url}/v1/kv/muster/fencing/${name}?raw`)).status;

(shared ? describe : describe.skip)('Consul fencing tokens across agent restarts', () => {
  test('a -dev agent restart loses every key and index; tokens after it are above all before', async () => {
    agent = (await upAgent('consul-fencing-dev-test')) as unknown as AgentEntry;
    const [a, b] = [await lockPort(), await lockPort()];
    const name = uniqueName('dev-restart');
    const before = await handOver(name, [a, b, a, b]);
    agent = (await restartAgent(agent)) as AgentEntry;
    expect(await tokenKey(name)).toBe(404); // the data is gone: nothing on the server orders what follows

    const after = await handOver(name, [await lockPort(), a]);
    console.log(`-dev restart: tokens before ${before.join(', ')}; after ${after.join(', ')}`);
    expect(after[0]).toBeGreaterThan(max(before));
    expect(after[1]).toBeGreaterThan(after[0]!);
  }, 90_000);

  test('a persistent agent restart keeps the token key; the next holder counts on from it, whatever its clock', async () => {
    agent = (await upAgent('consul-fencing-persist-test', { persist: true })) as unknown as AgentEntry;
    const name = uniqueName('persist-restart');
    const before = await handOver(name, [await lockPort(), await lockPort(), await lockPort()]);
    agent = (await restartAgent(agent)) as AgentEntry;
    expect(await tokenKey(name)).toBe(200);

    // A contender whose wall clock reads 0: only the stored token can put it above the old ones.
    const behind = createLock(
      new ConsulLockBackend(new ConsulClient({ address: agent.address }), {
        keyPrefix: 'muster/',
        behavior: 'release',
        lockDelay: 0,
        wallClock: () => 0,
      }),
      { timing: { minTtl: 1000 } },
    );
    locks.push(behind);
    const after = await handOver(name, [behind, await lockPort()]);
    console.log(`persistent restart: tokens before ${before.join(', ')}; after ${after.join(', ')}`);
    expect(after[0]).toBe(max(before) + 1n);
    expect(after[1]).toBeGreaterThan(after[0]!);
  }, 90_000);
});
