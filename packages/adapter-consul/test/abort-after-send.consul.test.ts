// An acquire aborted after its transaction reached Consul, before the answer came back (a slow
// network path: the agent applied it, the reply was still on its way). Nobody holds that grant, so
// the lock must be free for others at once, not kept by the attempt's session until Consul reaps it
// (ttl to 2 × ttl) plus lock-delay.
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import type { Lock } from '@muster/core';
import { eventually, uniqueName } from '@muster/core/testing';
import { startTcpProxy, type TcpProxy } from '../../../scripts/testenv/tcp-proxy.mjs';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
let proxy: TcpProxy | undefined;

beforeAll(async () => {
  if (!entry) return;
  const [host, port] = entry.address.split(':');
  proxy = await startTcpProxy({ target: { host: host!, port: Number(port) } });
});
afterAll(async () => proxy?.close());

/** The session holding the lock key, read straight from the agent. */
async function holderSession(name: string): Promise<string | undefined> {
  const res = await fetch(`${entry!.url}/v1/kv/muster/locks/${name}`);
  if (res.status === 404) return undefined;
  return ((await res.json()) as { Session?: string }[])[0]?.Session;
}

/**
 * Starts an acquire through the slow proxy, waits until the agent has applied its transaction (its
 * answer still in the proxy), ends it with `stop`, and returns how long the lock then took to be
 * free for a client on a direct connection.
 */
async function freeAfter(stop: (slow: Lock, controller: AbortController) => Promise<void>, expected: string): Promise<number> {
  const options = { minSessionTtl: '1s', lockDelay: '15s' };
  const slow = await open('lock', { ...options, address: proxy!.address });
  const other = await open('lock', options);
  const name = uniqueName('abort-after-send');
  // Every answer from the agent reaches `slow` 1.5 s late; its requests are on time.
  proxy!.setDelay({ downstream: 1500 });
  const controller = new AbortController();
  const outcome = slow.acquire(name, { ttl: 10_000, signal: controller.signal }).then(
    () => 'acquired',
    (error: { code?: string }) => error.code,
  );
  await eventually('the lock key to be taken by the slow attempt', () => holderSession(name), 10_000, 10);
  await stop(slow, controller);
  expect(await outcome).toBe(expected);
  const startedAt = Date.now();
  const lease = await eventually('the lock to be free', () => other.tryAcquire(name, { ttl: 2000 }), 3000);
  await lease.release();
  return Date.now() - startedAt;
}

(entry ? describe : describe.skip)('Consul: an acquire ended while its answer is on the way (lockDelay 15 s, ttl 10 s)', () => {
  afterEach(() => proxy!.setDelay({ downstream: 0 }));

  test('an abort leaves the lock free for the next contender', async () => {
    const ms = await freeAfter(async (_, controller) => controller.abort(), 'MUSTER_ABORTED');
    console.log(`lock free ${ms} ms after the abort`);
  }, 30_000);

  test("the client's close() leaves the lock free and returns", async () => {
    const ms = await freeAfter(async (slow) => slow.close(), 'MUSTER_CLOSED');
    console.log(`lock free ${ms} ms after close()`);
  }, 30_000);
});
