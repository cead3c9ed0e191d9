// An acquire aborted after its transaction reached Consul, before the answer came back (a slow
// network path: the agent applied it, the reply was still on its way). Nobody holds that grant, so
// the lock must be free for others at once, not kept by the attempt's session until Consul reaps it
// (ttl to 2 × ttl) plus lock-delay.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
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

(entry ? describe : describe.skip)('Consul: an acquire aborted while its answer is on the way', () => {
  test('leaves the lock free for the next contender (lockDelay 15 s, ttl 10 s)', async () => {
    const options = { minSessionTtl: '1s', lockDelay: '15s' };
    const slow = await open('lock', { ...options, address: proxy!.address });
    const other = await open('lock', options);
    const name = uniqueName('abort-after-send');
    // Every answer from the agent reaches `slow` 1.5 s late; its requests are on time.
    proxy!.setDelay({ downstream: 1500 });
    const controller = new AbortController();
    const acquiring = slow.acquire(name, { ttl: 10_000, signal: controller.signal });
    const outcome = acquiring.then(
      () => 'acquired',
      (error: { code?: string }) => error.code,
    );
    // The transaction is applied; its answer is still in the proxy.
    await eventually('the lock key to be taken by the slow attempt', () => holderSession(name), 10_000, 10);
    controller.abort();
    expect(await outcome).toBe('MUSTER_ABORTED');
    const startedAt = Date.now();
    const lease = await eventually('the lock to be free after the abort', () => other.tryAcquire(name, { ttl: 2000 }), 3000);
    console.log(`lock free ${Date.now() - startedAt} ms after the abort`);
    await lease.release();
  }, 30_000);
});
