// Member ids, lock names and service ids travel in request URLs, where '.' and '..' parts are
// resolved away and '//' is redirected: they are refused before any call, so a remove() can never
// reach a key outside the member's own; ids with ordinary '/' parts still round-trip.
import { afterAll, describe, expect, test } from '@jest/globals';
import { uniqueName } from '@muster/core/testing';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
const keyPrefix = `${uniqueName('key-names')}/`;
const kv = (key: string, init?: RequestInit) => fetch(`${entry!.url}/v1/kv/${keyPrefix}${key}`, init);
const invalid = { code: 'MUSTER_INVALID_ARGUMENT', message: expect.stringContaining("neither '.' nor '..'") as unknown };
const badKeyNames = ['..', '.', '../locks/important', 'a/../b', 'x/./y', 'a//b', '/x', 'x/'];

(entry ? describe : describe.skip)('names that cannot be a Consul key or path segment', () => {
  afterAll(async () => {
    await kv('?recurse', { method: 'DELETE' });
  });

  test('heartbeats refuse them for beat, get and remove; a key outside the member is never touched', async () => {
    const heartbeat = await open('heartbeat', { keyPrefix, minSessionTtl: '1s' });
    await kv('locks/important', { method: 'PUT', body: 'precious' });
    for (const id of badKeyNames) {
      await expect(heartbeat.beat(id, 1, { ttl: 10_000 })).rejects.toMatchObject(invalid);
      await expect(heartbeat.get(id)).rejects.toMatchObject(invalid);
      await expect(heartbeat.remove(id)).rejects.toMatchObject(invalid);
    }
    expect((await kv('locks/important')).status).toBe(200);

    const fine = ['a/b', '%2e%2e', 'sp ace', '...'];
    for (const id of fine) await heartbeat.beat(id, { id }, { ttl: 10_000 });
    for (const id of fine) expect(await heartbeat.get(id)).toMatchObject({ memberId: id, payload: { id } });
    expect((await heartbeat.list()).map((m) => m.memberId).sort()).toEqual([...fine].sort());
    for (const id of fine) await heartbeat.remove(id);
    expect(await heartbeat.list()).toEqual([]);
  }, 20_000);

  test('locks refuse them before any call', async () => {
    const lock = await open('lock', { keyPrefix, minSessionTtl: '1s' });
    for (const name of badKeyNames) await expect(lock.tryAcquire(name, { ttl: 10_000 })).rejects.toMatchObject(invalid);
  });

  test("discovery refuses '.' and '..' as a service name or id", async () => {
    const discovery = await open('discovery', {});
    for (const bad of ['.', '..']) {
      await expect(discovery.list(bad)).rejects.toMatchObject(invalid);
      await expect(
        discovery.register({ service: uniqueName('muster-dots'), id: bad, address: '127.0.0.1', port: 1 }),
      ).rejects.toMatchObject(invalid);
      await expect(discovery.register({ service: bad, id: uniqueName('dots'), address: '127.0.0.1', port: 1 })).rejects.toMatchObject(
        invalid,
      );
    }
  });
});
