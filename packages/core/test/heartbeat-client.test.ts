import { describe, expect, it } from '@jest/globals';
import { BackendError, type HeartbeatEvent, type HeartbeatStore } from '../src/index.js';
import { createHeartbeatStore, type HeartbeatBackend } from '../src/adapter.js';
import { eventually, nextMatching, nextWithin } from '../src/testing/index.js';
import { StaticHeartbeatBackend } from '../../adapter-static/src/heartbeat.js';

const scope = () => `hb-${Math.random()}`;
const open = (s: string, incarnation: string) => createHeartbeatStore(new StaticHeartbeatBackend({ scope: s }), { incarnation });

describe('heartbeat incarnations are ordered by the backend, not by a writer clock', () => {
  it('a restart whose incarnation sorts lower (a host clock 60 s behind) takes the member over at once; the old one is superseded', async () => {
    const s = scope();
    // The old format: base-36 milliseconds first. The restart's clock is 60 s behind.
    const old = open(s, `${(1_800_000_060_000).toString(36)}-old`);
    const restarted = open(s, `${(1_800_000_000_000).toString(36)}-new`);
    await old.beat('m', { who: 'old' });
    await restarted.beat('m', { who: 'restarted' });
    expect((await restarted.get('m'))?.payload).toEqual({ who: 'restarted' });
    await expect(old.beat('m', { who: 'old again' })).rejects.toMatchObject({ code: 'MUSTER_SUPERSEDED' });
    expect((await restarted.get('m'))?.payload).toEqual({ who: 'restarted' });
    await restarted.beat('m', { who: 'still here' });
    await Promise.all([old.close(), restarted.close()]);
  });

  it('the old incarnation, resumed after a pause, stays superseded on every later beat', async () => {
    const s = scope();
    const [old, restarted] = [open(s, 'b'), open(s, 'a')];
    await old.beat('m', 1);
    await restarted.beat('m', 2);
    for (let i = 0; i < 3; i++) await expect(old.beat('m', 1)).rejects.toMatchObject({ code: 'MUSTER_SUPERSEDED' });
    expect((await restarted.get('m'))?.payload).toBe(2);
  });

  it('an incarnation told it is superseded never writes the member again, even once the record is removed: the newest keeps it', async () => {
    const s = scope();
    const [old, young, operator] = [open(s, 'old'), open(s, 'young'), open(s, 'operator')];
    await old.beat('m', 1);
    await young.beat('m', 2);
    await expect(old.beat('m', 3)).rejects.toMatchObject({ code: 'MUSTER_SUPERSEDED' });
    await operator.remove('m');
    await expect(old.beat('m', 4)).rejects.toMatchObject({ code: 'MUSTER_SUPERSEDED' });
    await young.beat('m', 5);
    expect((await operator.get('m'))?.payload).toBe(5);
    await old.beat('other', 6); // other members of the old incarnation are not affected
  });

  it('after remove(), the same incarnation may write the member again', async () => {
    const s = scope();
    const store = open(s, 'x');
    await store.beat('m', 1);
    await store.remove('m');
    await store.beat('m', 2);
    expect((await store.get('m'))?.payload).toBe(2);
  });
});

describe('watch', () => {
  it('a member that comes back from stale with a changed payload is reported alive (and updated)', async () => {
    const s = scope();
    const writer: HeartbeatStore = open(s, 'w');
    const watcher: HeartbeatStore = open(s, 'v');
    const ttl = 100;
    const watch = watcher.watch()[Symbol.asyncIterator]();
    await nextWithin(watch, 5000, 'snapshot');
    await writer.beat('m', { n: 1 }, { ttl });
    await nextMatching(watch, (e) => e.type === 'joined', 5000, 'joined');
    await nextMatching(watch, (e) => e.type === 'stale', 5000, 'stale');
    await writer.beat('m', { n: 2 }, { ttl: 60_000 });
    const events: HeartbeatEvent[] = [await nextWithin(watch, 5000, 'alive'), await nextWithin(watch, 5000, 'updated')];
    expect(events.map((e) => e.type)).toEqual(['alive', 'updated']);
    for (const e of events) expect('member' in e && e.member.payload).toEqual({ n: 2 });
    await watch.return?.();
    await Promise.all([writer.close(), watcher.close()]);
  });
});

describe('watch before its first view', () => {
  const failing = (error: unknown) => {
    let calls = 0;
    const backend: HeartbeatBackend = {
      write: async () => undefined,
      read: async () => undefined,
      list: async () => [],
      remove: async () => undefined,
      async *views() {
        calls++;
        throw error;
      },
    };
    return { store: createHeartbeatStore(backend), calls: () => calls };
  };

  it('a permanent error (a refused ACL token, RBAC) fails the watch at once, as Discovery does, instead of retrying in silence', async () => {
    const { store, calls } = failing(new BackendError('scripted', 'the agent does not know the ACL token (HTTP 403)', { status: 403 }));
    await expect(nextWithin(store.watch()[Symbol.asyncIterator](), 5000, 'the failure')).rejects.toMatchObject({
      code: 'MUSTER_BACKEND',
      message: expect.stringContaining('ACL token'),
    });
    expect(calls()).toBe(1);
    await store.close();
  });

  it('a transient one (connection refused) is retried', async () => {
    const { store, calls } = failing(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    const watch = store.watch()[Symbol.asyncIterator]();
    const first = watch.next();
    await eventually('a second attempt', async () => calls() >= 2 || undefined, 10_000);
    await watch.return?.();
    await expect(first).resolves.toMatchObject({ done: true });
    await store.close();
  });
});

describe('a beat on a connection that never answers (a black hole)', () => {
  /** Writes hang until their signal aborts (as a request on a swallowed connection does) while `stuck` is set. */
  const hangingBackend = () => {
    const inner = new StaticHeartbeatBackend({ scope: scope() });
    const state = { stuck: true, abortedWrites: 0 };
    const backend: HeartbeatBackend = {
      read: (id) => inner.read(id),
      list: (g) => inner.list(g),
      remove: (id) => inner.remove(id),
      write: (record, options) => {
        if (!state.stuck) return inner.write(record, options);
        return new Promise((_, reject) =>
          options.signal.addEventListener('abort', () => {
            state.abortedWrites++;
            reject(new Error('request aborted'));
          }),
        );
      },
    };
    return { backend, state };
  };

  it('gives up after its ttl with MUSTER_TIMEOUT, tearing the request down, and the next beat lands', async () => {
    const { backend, state } = hangingBackend();
    const store = createHeartbeatStore(backend, { incarnation: 'a' });
    // Before: the beat waited for the adapter's own request timeout (30 s on Kubernetes) or for ever.
    await expect(store.beat('m', 1, { ttl: 200 })).rejects.toMatchObject({ code: 'MUSTER_TIMEOUT', cause: expect.any(Error) });
    expect(state.abortedWrites).toBe(1);
    state.stuck = false;
    await store.beat('m', 2, { ttl: 200 });
    expect((await store.get('m'))?.payload).toBe(2);
    await store.close();
  }, 20_000);

  it("gives up at its ttl, and at the caller's abort, even when the write ignores its signal and never settles", async () => {
    const inner = new StaticHeartbeatBackend({ scope: scope() });
    let stuck = true;
    // A third-party backend on a client that takes no AbortSignal: its write just never answers.
    const backend: HeartbeatBackend = {
      read: (id) => inner.read(id),
      list: (g) => inner.list(g),
      remove: (id) => inner.remove(id),
      write: (record, options) => (stuck ? new Promise(() => undefined) : inner.write(record, options)),
    };
    const store = createHeartbeatStore(backend, { incarnation: 'a' });
    // Before: the beat waited on the write for ever (the ttl only aborted a signal nobody listened to).
    await expect(store.beat('m', 1, { ttl: 200 })).rejects.toMatchObject({ code: 'MUSTER_TIMEOUT' });
    const caller = new AbortController();
    const beat = store.beat('m', 1, { ttl: 60_000, signal: caller.signal });
    caller.abort();
    await expect(beat).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
    stuck = false;
    await store.beat('m', 2, { ttl: 200 });
    expect((await store.get('m'))?.payload).toBe(2);
    await store.close();
  }, 10_000);

  it("the caller's own abort stays an abort", async () => {
    const { backend } = hangingBackend();
    const store = createHeartbeatStore(backend, { incarnation: 'a' });
    const caller = new AbortController();
    const beat = store.beat('m', 1, { ttl: 60_000, signal: caller.signal });
    caller.abort();
    // (review) As errors.md promises: MUSTER_ABORTED, not the backend's plain 'request aborted'.
    await expect(beat).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
    await store.close();
  });
});
