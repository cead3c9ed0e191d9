// The Discovery suite must fail implementations that break the contract; a suite that passes
// anything would prove nothing. Each broken one below is the example memory adapter with one fault.
import { describe, expect, it } from '@jest/globals';
import type { Discovery, DiscoveryEvent, Endpoint } from '../src/index.js';
import { createDiscovery } from '../src/adapter.js';
import { discoveryConformance, type DiscoverySuiteOptions } from '../src/testing/index.js';
import { MemoryBackend } from '../../../examples/adapter-memory/src/discovery.js';
import { registry } from '../../../examples/adapter-memory/src/registry.js';
import { memoryControl } from '../../../examples/adapter-memory/test/memory-control.js';
import { failures } from './suite-failures.js';

/** A port whose watch passes every event through `rewrite` (one event in, any number out). */
function rewriting(port: Discovery, rewrite: (event: DiscoveryEvent) => DiscoveryEvent[]): Discovery {
  return {
    get self() {
      return port.self;
    },
    list: (s, o) => port.list(s, o),
    async *watch(s, o) {
      for await (const event of port.watch(s, o)) yield* rewrite(event);
    },
    register: (r, o) => port.register(r, o),
    deregister: (o) => port.deregister(o),
    close: () => port.close(),
  };
}

/** Runs the suite (the cases matching `only`) on memory ports built by `make`, returning the failed cases. */
function suiteOn(make: (backend: MemoryBackend) => Discovery, only: RegExp, overrides: Partial<DiscoverySuiteOptions> = {}) {
  let scope = '';
  const opened: Discovery[] = [];
  return failures(
    (runner) =>
      discoveryConformance(runner, {
        name: 'broken',
        capabilities: { register: true },
        faults: { outage: true, restart: true },
        propagation: 1000,
        recovery: 1500,
        service: async () => {
          const made = memoryControl(async () => void (await Promise.all(opened.splice(0).map((d) => d.close()))));
          scope = made.scope;
          return made.control;
        },
        factory: () => {
          const port = make(new MemoryBackend(registry(scope), { renewInterval: 50 }));
          opened.push(port);
          return port;
        },
        ...overrides,
      }),
    only,
  );
}
const fast = (backend: MemoryBackend) => createDiscovery(backend, { backoff: { initialMs: 20, maxMs: 100 } });

describe('the Discovery conformance kit fails broken implementations', () => {
  it('passes the unbroken memory adapter (so the failures below are the faults, not the setup)', async () => {
    expect(await suiteOn(fast, /./)).toEqual([]);
  }, 60_000);

  it('degraded on every failed attempt, not once per outage', async () => {
    const port = (b: MemoryBackend) => rewriting(fast(b), (e) => (e.type === 'degraded' ? [e, e] : [e]));
    expect(await suiteOn(port, /fails then recovers/)).toEqual([expect.stringMatching(/fails then recovers/)]);
  }, 30_000);

  it('degraded with an empty member list', async () => {
    const port = (b: MemoryBackend) => rewriting(fast(b), (e) => (e.type === 'degraded' ? [{ ...e, endpoints: [] }] : [e]));
    expect(await suiteOn(port, /fails then recovers|restart/)).toHaveLength(2);
  }, 30_000);

  it('a restart announces every endpoint again', async () => {
    let known: readonly Endpoint[] = [];
    const port = (b: MemoryBackend) =>
      rewriting(fast(b), (e) => {
        const out: DiscoveryEvent[] = [e];
        // Treats the new stream as a fresh start: everyone is "added" again.
        if (e.type === 'recovered') out.push(...known.map((endpoint) => ({ type: 'added' as const, endpoint, endpoints: e.endpoints })));
        known = e.endpoints;
        return out;
      });
    expect(await suiteOn(port, /restart/)).toEqual([expect.stringMatching(/restart mid-watch/)]);
  }, 30_000);

  it('changes made during an outage are never reported', async () => {
    let recovered = false;
    const port = (b: MemoryBackend) =>
      rewriting(fast(b), (e) => {
        if (e.type === 'snapshot') recovered = false;
        if (e.type === 'recovered') recovered = true;
        return recovered && 'endpoint' in e ? [] : [e];
      });
    expect(await suiteOn(port, /fails then recovers|restart/)).toHaveLength(2);
  }, 30_000);

  it('a registration the backend forgot is never restored', async () => {
    const port = (b: MemoryBackend) => {
      const { renew: _dropped, ...once } = b.registration;
      return fast(Object.assign(Object.create(b) as MemoryBackend, { registration: once, views: b.views.bind(b), list: b.list.bind(b) }));
    };
    expect(await suiteOn(port, /register/)).toEqual(['a registration the backend forgets is registered again']);
  }, 30_000);

  it('register() that does nothing though the manifest says the adapter registers', async () => {
    const port = (b: MemoryBackend) => ({ ...rewriting(fast(b), (e) => [e]), register: async () => undefined });
    expect(await suiteOn(port, /register/)).toHaveLength(2);
  }, 30_000);

  it('register() that registers though the manifest says the adapter cannot', async () => {
    expect(await suiteOn(fast, /register/, { capabilities: { register: false } })).toEqual([
      'register() is a no-op where the adapter cannot register: it resolves and lists nothing new',
    ]);
  }, 30_000);
});
