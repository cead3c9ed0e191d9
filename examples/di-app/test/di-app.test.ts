// An application with its own inversify container gets Muster's ports injected into its classes
// (issue 14, part 3): one inversify instance, adapters' own bindings, and shutdown in dependency order.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Container, ContainerModule, type ServiceIdentifier } from 'inversify';
import { createMuster, MusterError, type Discovery, type HeartbeatStore, type Lock, type MusterConfig, type PortName } from '@muster/core';
import { defineAdapter, type DefinedAdapter } from '@muster/core/adapter';
import { DiscoveryId, HeartbeatStoreId, loadMuster, LockId, musterModule, MusterId } from '@muster/core/inversify';
// eslint-disable-next-line no-restricted-imports -- not an adapter: the test wraps static's ports to record when each closes
import staticAdapter from '@muster/adapter-static';
import { Compaction, Presence, Roster, startApp, type App } from '../src/index.js';

const config: MusterConfig = {
  discovery: {
    adapter: 'recorded',
    options: {
      members: [
        { id: 'a', address: '127.0.0.1', port: 9042 },
        { id: 'b', address: '127.0.0.2', port: 9042 },
      ],
      self: 'a',
    },
  },
  lock: { adapter: 'recorded', options: { scope: 'di-app' } },
  heartbeat: { adapter: 'recorded', options: { scope: 'di-app' } },
};
const settings = { service: 'di-app', memberId: 'a' };

type Port = Discovery | Lock | HeartbeatStore;
/** What the recorded adapter offers an application's container besides its ports. */
const ClosedPortsId: ServiceIdentifier<string[]> = Symbol.for('di-app.test.closed-ports');

/** The static adapter, with each port's close() and the application's last use of it written to `log`. */
function recorded(log: string[]): DefinedAdapter {
  const wrap =
    (port: PortName) =>
    async (options: unknown, context: Parameters<NonNullable<DefinedAdapter['discovery']>>[1]): Promise<Port> => {
      const instance = (await (staticAdapter[port] as (o: unknown, c: typeof context) => Port | Promise<Port>)(options, context)) as Port;
      const close = instance.close.bind(instance);
      instance.close = async () => {
        log.push(`${port} closed`);
        await close();
      };
      return instance;
    };
  return defineAdapter({
    name: 'recorded',
    core: '^0.1.0',
    options: staticAdapter.options,
    discovery: wrap('discovery') as never,
    lock: wrap('lock') as never,
    heartbeat: wrap('heartbeat') as never,
    bindings(container, _options, context) {
      if (context.port === 'discovery') container.bind(ClosedPortsId).toConstantValue(log);
    },
  });
}

const started: App[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((app) => app.stop()));
});

async function start(log: string[] = []): Promise<App> {
  const app = await startApp(config, settings, { adapters: { recorded: recorded(log) } });
  started.push(app);
  return app;
}

describe('Muster in an application container', () => {
  it("injects the ports into the application's classes, from one inversify instance", async () => {
    const app = await start();
    const muster = app.container.get(MusterId);
    const roster = app.container.get(Roster);
    expect(roster.discovery).toBe(muster.discovery);
    expect(app.container.get(Compaction).lock).toBe(muster.lock);
    expect(app.container.get(Presence).heartbeat).toBe(muster.heartbeat);
    expect(app.container.get(DiscoveryId)).toBe(muster.discovery);
    expect(app.container.get(LockId)).toBe(muster.lock);
    expect(app.container.get(HeartbeatStoreId)).toBe(muster.heartbeat);
    expect((await roster.peers()).map((e) => e.id)).toEqual(['b']);
    // Core's inversify entry and the application import the same build: its module is a ContainerModule here.
    expect(musterModule(config)).toBeInstanceOf(ContainerModule);
    expect(app.container).toBeInstanceOf(Container);
  });

  it('the services use the ports: a lease with a fencing token, a heartbeat', async () => {
    const app = await start();
    const compaction = app.container.get(Compaction);
    expect(await compaction.start()).toBe(true);
    expect(typeof compaction.fencingToken).toBe('bigint');
    await app.container.get(Presence).beat({ load: 1 });
    expect((await app.container.get(HeartbeatStoreId).get('a'))?.payload).toEqual({ load: 1 });
  });

  it("adapters contribute bindings of their own, removed with Muster's module", async () => {
    const log: string[] = [];
    const app = await start(log);
    expect(app.container.get(ClosedPortsId)).toBe(log);
    await app.stop();
    expect(app.container.isBound(ClosedPortsId)).toBe(false);
    expect(app.container.isBound(DiscoveryId)).toBe(false);
  });

  it("stops the application's services first, then Muster's ports newest first", async () => {
    const log: string[] = [];
    const app = await start(log);
    const compaction = app.container.get(Compaction);
    await compaction.start();
    const muster = app.container.get(MusterId);
    await app.container.get(Presence).beat({ load: 1 });
    const lock = muster.lock;
    const releasing = compaction.stop.bind(compaction);
    compaction.stop = async () => {
      await releasing();
      log.push('compaction released its lease');
    };
    await app.stop();
    expect(log).toEqual(['compaction released its lease', 'heartbeat closed', 'lock closed', 'discovery closed']);
    // Released, not lost to the close: a new holder gets it at once.
    const again = await createMuster({ lock: { adapter: 'static', options: { scope: 'di-app' } } });
    expect(await again.lock.tryAcquire('compaction')).toBeDefined();
    await again.close();
    await expect(lock.acquire('x')).rejects.toMatchObject({ code: 'MUSTER_CLOSED' });
  });

  it('loaded with loadMuster, unloading closes a Muster the application never resolved', async () => {
    const log: string[] = [];
    const container = new Container();
    const module = await loadMuster(container, config, { adapters: { recorded: recorded(log) } });
    await container.unload(module);
    expect(log).toEqual(['heartbeat closed', 'lock closed', 'discovery closed']);
  });

  it('loaded as a plain module, unbindAll closes Muster once a port was resolved', async () => {
    const log: string[] = [];
    const container = new Container();
    await container.load(musterModule(config, { adapters: { recorded: recorded(log) } }));
    container.get(MusterId);
    await container.unbindAll();
    expect(log).toEqual(['heartbeat closed', 'lock closed', 'discovery closed']);
  });

  it('a config that cannot be used fails the load and binds nothing', async () => {
    const container = new Container();
    const error = await container
      .load(musterModule({ discovery: { adapter: 'static', options: { members: 'x' } } }))
      .catch((e: unknown) => e);
    expect(MusterError.is(error, 'MUSTER_CONFIG')).toBe(true);
    expect(container.isBound(DiscoveryId)).toBe(false);
    expect(container.isBound(MusterId)).toBe(false);
  });
});
