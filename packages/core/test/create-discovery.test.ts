// createDiscovery's state machine against a scripted backend: what a watch emits on failures and
// recovery, how it backs off (through the injected delay, so no real time passes), what list()
// starts (nothing), and how a registration is kept alive.
import { describe, expect, test } from '@jest/globals';
import { BackendError, InvalidArgumentError, type Endpoint, type Registration } from '../src/index.js';
import { createDiscovery, EventChannel, type DiscoveryBackend, type DiscoveryView } from '../src/adapter.js';
import { eventSummary as summary, takeEvents as take } from '../src/testing/index.js';

const endpoint = (id: string, ready = true): Endpoint => ({
  id,
  address: `10.0.0.${id.charCodeAt(0) % 200}`,
  port: 9042,
  ready,
  metadata: {},
});
const view = (...ids: string[]) => ids.map((id) => endpoint(id));
const unreachable = () => new BackendError('scripted', 'connection refused');

/** Each views() call plays the next stream of the script; a stream ends in an error or hangs until aborted. */
type Stream = { views: DiscoveryView[]; then: 'fail' | 'hang' | 'end' | Error };

function scripted(streams: Stream[], extra: Partial<DiscoveryBackend> = {}) {
  const calls = { list: 0, views: 0, closed: 0 };
  const backend: DiscoveryBackend = {
    name: 'scripted',
    async list() {
      calls.list++;
      return view('b', 'a');
    },
    async *views(_service, { signal }) {
      calls.views++;
      const stream = streams.shift() ?? { views: [], then: 'fail' };
      if (stream.then instanceof Error) throw stream.then;
      for (const v of stream.views) yield v;
      if (stream.then === 'fail') throw unreachable();
      if (stream.then === 'end') return;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    async close() {
      calls.closed++;
    },
    ...extra,
  };
  return { backend, calls };
}

describe('createDiscovery watch', () => {
  test('one degraded per outage however many attempts fail, with the last endpoints; then recovered and the diff', async () => {
    const { backend, calls } = scripted([
      { views: [view('a')], then: 'fail' },
      { views: [], then: 'fail' },
      { views: [], then: 'fail' },
      { views: [], then: 'fail' },
      { views: [view('a', 'b')], then: 'hang' },
    ]);
    const delays: number[] = [];
    const d = createDiscovery(backend, { backoff: { delay: async (ms) => void delays.push(ms), random: () => 1 } });
    expect((await take(d.watch('svc'), 4)).map(summary)).toEqual(['snapshot[a]', 'degraded[a]', 'recovered[a]', 'added:b[a,b]']);
    expect(calls.views).toBe(5);
    expect(delays).toEqual([800, 1600, 3200, 6400]);
    await d.close();
    expect(calls.closed).toBe(1);
  });

  test('an error view keeps the stream: degraded once, recovered at the next good view, no restart', async () => {
    const { backend, calls } = scripted([
      {
        views: [view('a'), { error: new InvalidArgumentError('members file: bad') }, { error: new Error('still bad') }, view('b')],
        then: 'hang',
      },
    ]);
    const d = createDiscovery(backend, { backoff: { delay: async () => undefined } });
    const events = await take(d.watch('svc'), 5);
    expect(events.map(summary)).toEqual(['snapshot[a]', 'degraded[a]', 'recovered[a]', 'removed:a[b]', 'added:b[b]']);
    expect((events[1] as { error: { code: string } }).error.code).toBe('MUSTER_INVALID_ARGUMENT');
    expect(calls.views).toBe(1);
    await d.close();
  });

  test('backoff resets after a good view', async () => {
    const { backend } = scripted([
      { views: [view('a')], then: 'fail' },
      { views: [], then: 'fail' },
      { views: [view('a')], then: 'fail' },
      { views: [view('a', 'b')], then: 'hang' },
    ]);
    const delays: number[] = [];
    const d = createDiscovery(backend, {
      backoff: { delay: async (ms) => void delays.push(ms), random: () => 1, initialMs: 100, maxMs: 150 },
    });
    await take(d.watch('svc'), 6);
    expect(delays).toEqual([100, 150, 100]);
    await d.close();
  });

  test('a transient failure before the first view is retried in silence; a non-transient one fails the watch', async () => {
    const retried = scripted([
      { views: [], then: 'fail' },
      { views: [view('a')], then: 'hang' },
    ]);
    const d1 = createDiscovery(retried.backend, { backoff: { delay: async () => undefined } });
    expect((await take(d1.watch('svc'), 1)).map(summary)).toEqual(['snapshot[a]']);
    await d1.close();

    const refused = scripted([{ views: [], then: new BackendError('scripted', 'forbidden', { status: 403 }) }]);
    const d2 = createDiscovery(refused.backend, { backoff: { delay: async () => undefined } });
    await expect(take(d2.watch('svc'), 1)).rejects.toMatchObject({ status: 403 });
    // A programming error is not retried either, and reaches the caller as a MusterError with its cause.
    const buggy = scripted([{ views: [], then: new TypeError('x is undefined') }]);
    const d3 = createDiscovery(buggy.backend);
    await expect(take(d3.watch('svc'), 1)).rejects.toMatchObject({ code: 'MUSTER_BACKEND', cause: expect.any(TypeError) });
    await Promise.all([d2.close(), d3.close()]);
  });

  test('a stream that ends by itself is a failure: degraded, then a new stream', async () => {
    const { backend, calls } = scripted([
      { views: [view('a')], then: 'end' },
      { views: [view('a')], then: 'hang' },
    ]);
    const d = createDiscovery(backend, { backoff: { delay: async () => undefined } });
    expect((await take(d.watch('svc'), 3)).map(summary)).toEqual(['snapshot[a]', 'degraded[a]', 'recovered[a]']);
    expect(calls.views).toBe(2);
    await d.close();
  });

  test('abort and close end a watch; the backend stream sees its signal', async () => {
    let aborted = 0;
    const backend: DiscoveryBackend = {
      name: 'scripted',
      list: async () => [],
      async *views(_s, { signal }) {
        yield [];
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        aborted++;
      },
    };
    const d = createDiscovery(backend);
    const controller = new AbortController();
    const first = d.watch('svc', { signal: controller.signal })[Symbol.asyncIterator]();
    const second = d.watch('svc')[Symbol.asyncIterator]();
    expect((await first.next()).value?.type).toBe('snapshot');
    expect((await second.next()).value?.type).toBe('snapshot');
    controller.abort();
    expect(await first.next()).toEqual({ value: undefined, done: true });
    await d.close();
    expect(await second.next()).toEqual({ value: undefined, done: true });
    expect(aborted).toBe(2);
    expect(() => d.watch('svc')).toThrow(/closed/);
    await expect(d.list('svc')).rejects.toMatchObject({ code: 'MUSTER_CLOSED' });
  });
});

describe('createDiscovery list', () => {
  test('one backend call, sorted by id, nothing left running', async () => {
    const { backend, calls } = scripted([]);
    const d = createDiscovery(backend);
    expect((await d.list('svc')).map((e) => e.id)).toEqual(['a', 'b']);
    expect(calls).toEqual({ list: 1, views: 0, closed: 0 });
    await expect(d.list('svc', { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
    await d.close();
  });
});

describe('createDiscovery register', () => {
  const self: Registration = { service: 'svc', id: 'me', address: '10.0.0.9', port: 9042 };

  function registry() {
    const log: string[] = [];
    const present = new Set<string>();
    let failRenewals = 0;
    const changed = new EventChannel<void>(() => undefined);
    const backend: DiscoveryBackend = {
      name: 'scripted',
      list: async () => [],
      views: () => new EventChannel<DiscoveryView>(() => undefined),
      registration: {
        renewInterval: 10,
        async register(r) {
          log.push(`register ${r.id}`);
          present.add(r.id);
          changed.push();
        },
        async renew(r) {
          if (failRenewals > 0) {
            failRenewals--;
            log.push('renew failed');
            throw unreachable();
          }
          return present.has(r.id);
        },
        async deregister(r) {
          log.push(`deregister ${r.id}`);
          present.delete(r.id);
        },
      },
    };
    return { backend, log, present, changed, failNext: (n: number) => (failRenewals = n) };
  }

  test('a registration the backend forgets is registered again; failed renewals are retried', async () => {
    const r = registry();
    const d = createDiscovery(r.backend);
    await d.register(self);
    const next = r.changed[Symbol.asyncIterator]();
    await next.next();
    r.failNext(2);
    r.present.delete('me'); // the backend forgot it (an agent restart)
    await next.next();
    expect(r.log).toEqual(['register me', 'renew failed', 'renew failed', 'register me']);
    await d.close();
    expect(r.log.at(-1)).toBe('deregister me');
    expect(r.present.size).toBe(0);
  });

  test('deregister stops the keeper; registering another id deregisters the first', async () => {
    const r = registry();
    const d = createDiscovery(r.backend);
    await d.register(self);
    await d.register({ ...self, id: 'me-too' });
    expect(r.log).toEqual(['register me', 'deregister me', 'register me-too']);
    await d.deregister();
    await d.deregister();
    expect(r.log).toEqual(['register me', 'deregister me', 'register me-too', 'deregister me-too']);
    await expect(d.register({ ...self, id: '' })).rejects.toMatchObject({ code: 'MUSTER_INVALID_ARGUMENT' });
    await d.close();
  });

  test('close() while register() is in flight: the registration that reached the backend is taken back', async () => {
    // SIGTERM during start-up: the agent applied the registration, its answer was not read yet.
    const r = registry();
    const arrived = new EventChannel<void>(() => undefined);
    const inner = r.backend.registration!.register;
    r.backend.registration!.register = async (registration, { signal }) => {
      await inner(registration, { signal });
      arrived.push();
      await new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    };
    const d = createDiscovery(r.backend);
    const registering = d.register(self);
    await arrived[Symbol.asyncIterator]().next();
    const closes = [d.close(), d.close()];
    await expect(registering).rejects.toMatchObject({ code: 'MUSTER_CLOSED' });
    for (const close of closes) {
      await close;
      expect(r.present.size).toBe(0); // each close() resolves only once the registration is gone
    }
    expect(r.log).toEqual(['register me', 'deregister me']);
  });

  test('deregister() that fails or is aborted keeps the registration for close() to take back', async () => {
    const r = registry();
    const d = createDiscovery(r.backend);
    await d.register(self);
    await expect(d.deregister({ signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
    const inner = r.backend.registration!.deregister;
    r.backend.registration!.deregister = async () => {
      throw unreachable();
    };
    await expect(d.deregister()).rejects.toThrow('connection refused');
    r.backend.registration!.deregister = inner;
    await d.close();
    expect(r.present.size).toBe(0);
  });

  test('without a registration backend, register and deregister are no-ops', async () => {
    const { backend } = scripted([]);
    const d = createDiscovery(backend);
    await d.register(self);
    await d.deregister();
    expect(d.self).toBeUndefined();
    await d.close();
  });
});
