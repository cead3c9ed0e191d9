// Consul-specific discovery behaviour: self-registration kept passing by its TTL check, re-registration
// after the agent forgets the service, deregistration on close, tags/meta, the `passing` filter and warnings.
import { describe, expect, test } from '@jest/globals';
import Consul from 'consul';
import { eventually, nextMatching, nextWithin, uniqueName } from '@muster/core/testing';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
const discovery = (options: Record<string, unknown> = {}) => open('discovery', { watchWait: '10s', checkTtl: '1500ms', ...options });

const operator = () => new Consul({ host: '127.0.0.1', port: Number(new URL(entry!.url).port) });

(entry ? describe : describe.skip)('Consul discovery specifics', () => {
  test('register() keeps its TTL check passing beyond the TTL, maps tags and meta, and close() deregisters', async () => {
    const service = uniqueName('muster-self');
    const d = await discovery();
    await d.register({
      service,
      id: `${service}-1`,
      address: '127.0.0.9',
      port: 9042,
      ports: { admin: 8081 },
      tags: ['blue'],
      metadata: { version: '1.2.3' },
    });
    await new Promise((r) => setTimeout(r, 4000)); // > 2 × checkTtl: without the keeper the check would be critical
    const [self] = await d.list(service);
    expect(self).toMatchObject({ id: `${service}-1`, address: '127.0.0.9', port: 9042, ready: true, ports: { admin: 8081 } });
    expect(self!.metadata).toMatchObject({ version: '1.2.3', tags: 'blue' });
    expect(d.self?.id).toBe(`${service}-1`);
    const other = await discovery();
    await d.close();
    expect(await other.list(service)).toEqual([]);
  }, 20_000);

  test('the keeper registers again after the agent forgets the service', async () => {
    const service = uniqueName('muster-forgotten');
    const d = await discovery();
    await d.register({ service, id: `${service}-1`, address: '127.0.0.9', port: 9042 });
    await operator().agent.service.deregister({ id: `${service}-1` });
    expect(await d.list(service)).toEqual([]);
    const back = await eventually(
      'the service to be registered again',
      async () => {
        const l = await d.list(service);
        return l.length === 1 && l[0]!.ready ? l : undefined;
      },
      5000,
    );
    expect(back[0]!.id).toBe(`${service}-1`);
    await d.deregister();
    expect(await d.list(service)).toEqual([]);
  }, 15_000);

  test('health: passing lists only ready instances; readyOnWarning counts warnings as ready', async () => {
    const service = uniqueName('muster-filter');
    const consul = operator();
    const add = (id: string, status: string) =>
      consul.agent.service.register({ name: service, id, port: 1, check: { name: 't', ttl: '10m', timeout: '5s', status } });
    await add('ok', 'passing');
    await add('warn', 'warning');
    await add('down', 'critical');
    try {
      const all = await (await discovery()).list(service);
      expect(all.map((e) => [e.id, e.ready])).toEqual([
        ['down', false],
        ['ok', true],
        ['warn', false],
      ]);
      expect((await (await discovery({ health: 'passing' })).list(service)).map((e) => e.id)).toEqual(['ok']);
      const lenient = await (await discovery({ readyOnWarning: true })).list(service);
      expect(lenient.map((e) => [e.id, e.ready])).toEqual([
        ['down', false],
        ['ok', true],
        ['warn', true],
      ]);
    } finally {
      await Promise.allSettled(['ok', 'warn', 'down'].map((id) => consul.agent.service.deregister({ id })));
    }
  });

  test('a watch sees a check pass → fail → pass as updated events, and a tag change too', async () => {
    const service = uniqueName('muster-flip');
    const consul = operator();
    await consul.agent.service.register({
      name: service,
      id: 'flip',
      port: 1,
      tags: ['a'],
      check: { name: 't', ttl: '10m', timeout: '5s', status: 'passing' },
    });
    try {
      const d = await discovery({ minWatchInterval: '10ms' });
      const watch = d.watch(service)[Symbol.asyncIterator]();
      expect((await nextWithin(watch, 5000, 'snapshot')).endpoints.map((e) => e.ready)).toEqual([true]);
      await consul.agent.check.fail({ id: 'service:flip' });
      const failed = await nextMatching(watch, (e) => e.type === 'updated', 5000, 'updated (not ready)');
      expect(failed.endpoints[0]!.ready).toBe(false);
      await consul.agent.check.pass({ id: 'service:flip' });
      const passed = await nextMatching(watch, (e) => e.type === 'updated', 5000, 'updated (ready)');
      expect(passed.endpoints[0]!.ready).toBe(true);
      await consul.agent.service.register({
        name: service,
        id: 'flip',
        port: 1,
        tags: ['b'],
        check: { name: 't', ttl: '10m', timeout: '5s', status: 'passing' },
      });
      const retagged = await nextMatching(watch, (e) => e.type === 'updated', 5000, 'updated (tags)');
      expect(retagged.endpoints[0]!.metadata.tags).toBe('b');
      await watch.return?.();
    } finally {
      await consul.agent.service.deregister({ id: 'flip' });
    }
  });

  test('a wrong datacenter fails list() and watch() with a message naming it', async () => {
    const d = await discovery({ datacenter: 'nowhere' });
    await expect(d.list('x')).rejects.toThrow(/datacenter 'nowhere' is unknown/);
    const watch = d.watch('x')[Symbol.asyncIterator]();
    await expect(watch.next()).rejects.toThrow(/datacenter 'nowhere' is unknown/);
  });
});
