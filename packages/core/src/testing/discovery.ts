import type { Discovery, DiscoveryEvent, Endpoint } from '../ports/discovery.js';
import { assert, cleaningRunner, eventually, nextMatching, nextWithin, type SuiteRunner } from './runner.js';
import { discoveryFaultCases } from './discovery-faults.js';
import { registrationCases } from './discovery-registration.js';
import { retryWindow, watching } from './discovery-cases.js';

/** What the suite needs to change a service's membership in the real backend. */
export interface DiscoveryControl {
  /** The service name to list and watch. */
  readonly service: string;
  add(endpoint: { id: string; address: string; port: number; ready: boolean }): Promise<void>;
  setReady(id: string, ready: boolean): Promise<void>;
  remove(id: string): Promise<void>;
  /** Removes whatever the test created. */
  cleanup?(): Promise<void>;
  /**
   * Makes the backend unreachable for the clients under test (not for this control, whose
   * membership changes still land) until `end()`. Without it the outage case is skipped, and the
   * suite says so.
   */
  readonly outage?: DiscoveryOutage;
  /**
   * The backend restarts under the clients: every open connection breaks, `during` changes
   * membership while it is down, then it serves again. Without it the restart case is skipped.
   */
  restart?(during: () => Promise<void>): Promise<void>;
  /**
   * Removes a registration behind the client's back, as an operator or an agent that restarted
   * without its state would. Needed by the re-registration case when the adapter can register.
   */
  forget?(id: string): Promise<void>;
}

export interface DiscoveryOutage {
  begin(): Promise<void>;
  end(): Promise<void>;
  /**
   * How many times the clients tried the backend since begin() (refused connections). With it the
   * suite waits for retries during the outage, so "degraded once" is checked against real retries.
   */
  attempts?(): number;
}

/**
 * What the adapter can do, declared by the adapter (abstract-level's manifest): the suite skips the
 * cases of a missing feature by it, says so in the test name, and runs the opposite case instead.
 */
export interface DiscoveryCapabilities {
  /**
   * register() puts this process into the backend and keeps it there (Consul). false: register()
   * is a documented no-op because the platform or the configuration is the registration
   * (Kubernetes, static); the suite then checks that it changes nothing.
   */
  readonly register: boolean;
}

export interface DiscoverySuiteOptions {
  readonly name: string;
  readonly capabilities: DiscoveryCapabilities;
  /** Which faults the control can cause; a fault case the control cannot cause is skipped and says so. */
  readonly faults: { readonly outage: boolean; readonly restart: boolean };
  /** A new client; called after `service()` for each test. */
  readonly factory: () => Discovery | Promise<Discovery>;
  /** A fresh, empty service for one test. */
  readonly service: () => Promise<DiscoveryControl>;
  /** How long a change may take to reach a watch (ms; default 10 s). */
  readonly propagation?: number;
  /**
   * How long a watch may take to use the backend again after an outage, and a forgotten
   * registration to be restored (ms; default 2 × propagation + 35 s: one full 30 s backoff).
   */
  readonly recovery?: number;
  readonly timeout?: number;
}

/** The iterator's next result, or 'hung' when none comes within `ms`. */
async function endWithin(iterator: AsyncIterator<unknown>, ms: number): Promise<IteratorResult<unknown> | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([iterator.next(), new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

const ids = (endpoints: readonly Endpoint[]) => endpoints.map((e) => e.id);

/**
 * The Discovery contract: list is sorted and complete, watch starts with a snapshot and reports
 * add / ready flip / remove each with the full snapshot, list equals the last snapshot, and a watch
 * ends on abort and on close. Then the faults (discovery-faults.ts): a backend that fails and
 * recovers, a backend restart mid-watch; and registration (discovery-registration.ts), by the
 * adapter's capability manifest.
 */
export function discoveryConformance(runner: SuiteRunner, options: DiscoverySuiteOptions): void {
  const propagation = options.propagation ?? 10_000;
  const timeout = options.timeout ?? propagation * 4 + 2 * retryWindow(options, propagation);
  const { open, defer, test } = cleaningRunner(runner, timeout);
  const setup = async () => {
    const control = await options.service();
    defer(() => control.cleanup?.());
    const discovery = await open(options.factory);
    return { discovery, control };
  };

  runner.describe(`Discovery conformance: ${options.name}`, () => {
    test('list returns every endpoint, sorted by id, with its fields', async () => {
      const { discovery, control } = await setup();
      assert.deepEqual(await discovery.list(control.service), [], 'a new service is not empty');
      await control.add({ id: 'member-b', address: '127.0.0.12', port: 9042, ready: true });
      await control.add({ id: 'member-a', address: '127.0.0.11', port: 9043, ready: false });
      const list = await eventually(
        'both endpoints to be listed',
        async () => {
          const l = await discovery.list(control.service);
          return l.length === 2 ? l : undefined;
        },
        propagation,
      );
      assert.deepEqual(ids(list), ['member-a', 'member-b']);
      assert.deepEqual([list[0]!.address, list[0]!.port, list[0]!.ready], ['127.0.0.11', 9043, false]);
      assert.deepEqual([list[1]!.address, list[1]!.port, list[1]!.ready], ['127.0.0.12', 9042, true]);
      assert.equal(typeof list[0]!.metadata, 'object');
    });

    test('watch starts with a snapshot, then reports add, ready flip and remove with the full state', async () => {
      const { discovery, control } = await setup();
      const { watch } = await watching(discovery, control, [{ id: 'first', address: '127.0.0.21', port: 9042, ready: true }], propagation);

      await control.add({ id: 'second', address: '127.0.0.22', port: 9042, ready: true });
      const added = await nextMatching(watch, (e) => e.type !== 'degraded' && e.type !== 'recovered', propagation, 'added event');
      assert.equal(added.type, 'added');
      assert.equal((added as Extract<DiscoveryEvent, { endpoint: Endpoint }>).endpoint.id, 'second');
      assert.deepEqual(ids(added.endpoints), ['first', 'second']);

      await control.setReady('second', false);
      const flipped = await nextMatching(watch, (e) => e.type === 'updated', propagation, 'updated event (ready → false)');
      const endpoint = (flipped as Extract<DiscoveryEvent, { endpoint: Endpoint }>).endpoint;
      assert.equal(endpoint.id, 'second');
      assert.equal(endpoint.ready, false);
      assert.equal(flipped.endpoints.find((e) => e.id === 'second')?.ready, false);

      await control.remove('first');
      const removed = await nextMatching(watch, (e) => e.type === 'removed', propagation, 'removed event');
      assert.equal((removed as Extract<DiscoveryEvent, { endpoint: Endpoint }>).endpoint.id, 'first');
      assert.deepEqual(ids(removed.endpoints), ['second']);

      assert.deepEqual(await discovery.list(control.service), removed.endpoints, 'list() differs from the last snapshot');
      await watch.return?.();
    });

    test('a watch ends when its signal aborts', async () => {
      const { discovery, control } = await setup();
      const controller = new AbortController();
      const watch = discovery.watch(control.service, { signal: controller.signal })[Symbol.asyncIterator]();
      await nextWithin(watch, propagation, 'initial snapshot');
      controller.abort();
      const end = await endWithin(watch, propagation);
      assert.notEqual(end, 'hung', 'the watch did not end after abort');
      assert.equal((end as IteratorResult<unknown>).done, true);
    });

    test('a watch ends when the adapter closes', async () => {
      const { discovery, control } = await setup();
      const watch = discovery.watch(control.service)[Symbol.asyncIterator]();
      await nextWithin(watch, propagation, 'initial snapshot');
      await discovery.close();
      const end = await endWithin(watch, propagation);
      assert.notEqual(end, 'hung', 'the watch did not end after close()');
      assert.equal((end as IteratorResult<unknown>).done, true);
    });

    const context = { options, propagation, test, setup };
    discoveryFaultCases(runner, context);
    registrationCases(runner, context);
  });
}
