// Consul-specific lock behaviour beyond the conformance suite: the fencing token lives in its own
// key and survives a deleted and recreated lock key (LockIndex does not), lock-delay's effect on
// failover, and onLost when an operator destroys the session or deletes the key.
import { describe, expect, test } from '@jest/globals';
import { InvalidArgumentError } from '@muster/core';
import { eventually, simulateCrash, uniqueName } from '@muster/core/testing';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
const lock = (options: Record<string, unknown> = {}) => open('lock', { minSessionTtl: '1s', lockDelay: '0s', ...options });

async function api(method: string, path: string, body?: string): Promise<unknown> {
  const res = await fetch(`${entry!.url}${path}`, { method, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  if (!res.ok && res.status !== 404) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

const raw = async (key: string) => (await fetch(`${entry!.url}/v1/kv/${key}?raw`)).text();
const kv = async (key: string) =>
  ((await api('GET', `/v1/kv/${key}`)) as { LockIndex: number; ModifyIndex: number; Session?: string }[] | undefined)?.[0];

(entry ? describe : describe.skip)('Consul lock specifics', () => {
  test('the fencing token keeps rising when the key is deleted and recreated, where LockIndex restarts', async () => {
    const [a, b] = [await lock(), await lock()];
    const name = uniqueName('fence');
    const key = `muster/locks/${name}`;
    const first = await a.acquire(name, { ttl: 2000 });
    await first.release();
    // An operator (or behavior=delete) removes the lock key.
    await api('DELETE', `/v1/kv/${key}`);
    const second = await b.acquire(name, { ttl: 2000 });
    expect((await kv(key))?.LockIndex).toBe(1); // LockIndex started over ...
    expect(second.token).toBeGreaterThan(first.token); // ... the token did not.
    // The token key holds the last token handed out; a foreign write to the lock key changes nothing.
    expect(await raw(`muster/fencing/${name}`)).toBe(String(second.token));
    await api('PUT', `/v1/kv/${key}`, 'overwritten');
    await second.release();
    const third = await a.acquire(name, { ttl: 2000 });
    expect(third.token).toBeGreaterThan(second.token);
    await third.release();
  });

  test('lock-delay holds the lock after a crash, not after a graceful release', async () => {
    // Conditions, not durations: a try right after a release succeeds; a try right after Consul
    // freed a crashed holder's key is refused (lock-delay's window is far longer than the gap
    // between seeing the key free and trying). How long each took is printed.
    const lockDelay = 6000;
    const ttl = 1000;
    const [a, b] = [await lock({ lockDelay }), await lock({ lockDelay })];
    const name = uniqueName('delay');
    const graceful = await a.acquire(name, { ttl });
    await graceful.release();
    const after = await b.tryAcquire(name, { ttl });
    expect(after).toBeDefined();
    await after!.release();

    const crasher = await lock({ lockDelay });
    const crashed = await crasher.acquire(`${name}-crash`, { ttl });
    (crasher as unknown as Record<symbol, () => void>)[simulateCrash]!();
    const started = Date.now();
    // Consul invalidates the session (between ttl and 2×ttl after its last renewal) and frees the key ...
    await eventually(
      "Consul to free the crashed holder's key",
      async () => ((await kv(`muster/locks/${name}-crash`))?.Session ? undefined : true),
      20_000,
      50,
    );
    // ... and refuses acquires for lock-delay after that.
    expect(await b.tryAcquire(`${name}-crash`, { ttl })).toBeUndefined();
    const next = await b.acquire(`${name}-crash`, { ttl, wait: 30_000 });
    console.log(`lock-delay ${lockDelay} ms, session ttl ${ttl} ms: failover after ${Date.now() - started} ms`);
    expect(next.token).toBeGreaterThan(crashed.token);
    await next.release();
  }, 60_000);

  test('onLost fires when an operator destroys the session or deletes the key', async () => {
    const a = await lock();
    const ttl = 1500;
    const one = await a.acquire(uniqueName('destroyed'), { ttl });
    const session = (await kv(`muster/locks/${one.name}`))!.Session!;
    await api('PUT', `/v1/session/destroy/${session}`);
    await new Promise<void>((r) => one.onLost.addEventListener('abort', () => r(), { once: true }));
    expect(String((one.onLost.reason as Error).message)).toMatch(/session .* is gone|released by someone else/);

    const two = await a.acquire(uniqueName('deleted'), { ttl });
    await api('DELETE', `/v1/kv/muster/locks/${two.name}`);
    await new Promise<void>((r) => two.onLost.addEventListener('abort', () => r(), { once: true }));
    expect(String((two.onLost.reason as Error).message)).toMatch(/was deleted/);
    await expect(two.renew()).rejects.toMatchObject({ code: 'MUSTER_LOCK_LOST' });
  }, 15_000);

  test('two clients configured with the same holder identity still exclude each other (sessions, not names, hold the key)', async () => {
    const [a, b] = [await lock({ holder: 'twin' }), await lock({ holder: 'twin' })];
    const name = uniqueName('twin');
    const first = await a.acquire(name, { ttl: 2000 });
    expect(await b.tryAcquire(name, { ttl: 2000 })).toBeUndefined();
    await first.release();
    const second = await b.acquire(name, { ttl: 2000, wait: 10_000 });
    expect(second.token).toBeGreaterThan(first.token);
    expect(await a.tryAcquire(name, { ttl: 2000 })).toBeUndefined();
    await second.release();
  });

  test('a ttl below minSessionTtl is refused before any call; one below the servers’ floor names it', async () => {
    const a = await lock({ minSessionTtl: '1s' });
    await expect(a.acquire(uniqueName('short'), { ttl: 500 })).rejects.toBeInstanceOf(InvalidArgumentError);
    const b = await lock({ minSessionTtl: '100ms' });
    await expect(b.acquire(uniqueName('short'), { ttl: 500 })).rejects.toThrow(/session_ttl_min/);
  });
});
