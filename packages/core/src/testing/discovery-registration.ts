import type { DiscoveryEvent } from '../ports/discovery.js';
import { idsOf, isChange, retryWindow, seeded, type DiscoveryCases } from './discovery-cases.js';
import { assert, nextMatching, nextWithin, skipCase, type SuiteRunner } from './runner.js';

const change = (type: 'added' | 'removed', id: string) => (e: DiscoveryEvent) => isChange(e) && e.type === type && e.endpoint.id === id;

/**
 * Registration, by the capability manifest: where the adapter registers, register() puts this
 * process into the backend and keeps it there, also after the backend forgets it; where it cannot
 * (the platform or the configuration registers), register() changes nothing.
 */
export function registrationCases(runner: SuiteRunner, { propagation, test, setup, options }: DiscoveryCases): void {
  const self = (service: string, id: string) => ({ service, id, address: '127.0.0.41', port: 9042, metadata: { role: 'self' } });
  const why = `${options.name} cannot register (capabilities.register = false)`;

  if (!options.capabilities.register) {
    skipCase(runner, 'register puts this process in the backend; deregister takes it out', why);
    skipCase(runner, 'a registration the backend forgets is registered again', why);
    // The opposite case: a documented no-op must be one.
    test('register() is a no-op where the adapter cannot register: it resolves and lists nothing new', async () => {
      const { discovery, control } = await setup();
      await seeded(discovery, control, [{ id: 'configured', address: '127.0.0.40', port: 9042, ready: true }], propagation);
      await discovery.register(self(control.service, 'not-registered'));
      assert.deepEqual(idsOf(await discovery.list(control.service)), ['configured'], 'register() changed the membership');
      await discovery.deregister();
      assert.deepEqual(idsOf(await discovery.list(control.service)), ['configured'], 'deregister() changed the membership');
    });
    return;
  }

  test('register puts this process in the backend; deregister takes it out', async () => {
    const { discovery, control } = await setup();
    const watch = discovery.watch(control.service)[Symbol.asyncIterator]();
    const snapshot = await nextWithin(watch, propagation, 'initial snapshot');
    assert.deepEqual(idsOf(snapshot.endpoints), []);
    await discovery.register(self(control.service, 'self-1'));
    const added = await nextMatching(watch, change('added', 'self-1'), propagation, 'the registration to be watched');
    assert.equal((added as { endpoint: { address: string } }).endpoint.address, '127.0.0.41');
    assert.deepEqual(idsOf(await discovery.list(control.service)), ['self-1']);
    await discovery.deregister();
    await nextMatching(watch, change('removed', 'self-1'), propagation, 'the deregistration to be watched');
    await discovery.deregister(); // a second one is a no-op
    await watch.return?.();
  });

  test('a registration the backend forgets is registered again', async () => {
    const { discovery, control } = await setup();
    assert.ok(
      control.forget,
      `${options.name}: the control has no forget(); an adapter that registers must let the suite test re-registration`,
    );
    const watch = discovery.watch(control.service)[Symbol.asyncIterator]();
    await nextWithin(watch, propagation, 'initial snapshot');
    await discovery.register(self(control.service, 'self-2'));
    await nextMatching(watch, change('added', 'self-2'), propagation, 'the registration to be watched');
    await control.forget('self-2');
    await nextMatching(watch, change('removed', 'self-2'), propagation, 'the forgotten registration to be gone');
    await nextMatching(
      watch,
      change('added', 'self-2'),
      retryWindow(options, propagation),
      'the forgotten registration to be registered again',
    );
    await discovery.deregister();
    await nextMatching(watch, change('removed', 'self-2'), propagation, 'the deregistration to be watched');
    await watch.return?.();
  });
}
