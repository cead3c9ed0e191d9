// Consul-specific heartbeat behaviour: a member that stops beating stays listed (stale) and is then
// deleted by Consul with its session (`left`); a restarted member (new incarnation) takes its key
// over in one write, so peers see `replaced`, not `left` + `joined`.
import { describe, expect, test } from '@jest/globals';
import type { HeartbeatEvent } from '@muster/core';
import { nextMatching, nextWithin, uniqueName } from '@muster/core/testing';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
const store = (options: Record<string, unknown> = {}) => open('heartbeat', { minSessionTtl: '1s', watchWait: '10s', ...options });

type MemberEvent = Extract<HeartbeatEvent, { member: unknown }>;

(entry ? describe : describe.skip)('Consul heartbeat specifics', () => {
  test('a member that stops beating goes stale, then Consul deletes it with its session (left)', async () => {
    const group = uniqueName('reaped');
    const writer = await store({ removeAfterTtls: 2 });
    const watcher = await store();
    const watch = watcher.watch(group)[Symbol.asyncIterator]();
    await nextWithin(watch, 5000, 'snapshot');
    const started = Date.now();
    await writer.beat('quiet', { n: 1 }, { ttl: 1000, group });
    await nextMatching(watch, (e) => e.type === 'joined', 5000, 'joined');
    await nextMatching(watch, (e) => e.type === 'stale', 5000, 'stale');
    // The session's TTL is max(minSessionTtl, 2 × ttl) = 2 s; Consul deletes between 1 × and 2 × that.
    const left = (await nextMatching(watch, (e) => e.type === 'left', 10_000, 'left')) as MemberEvent;
    expect(left.member.memberId).toBe('quiet');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    await watch.return?.();
  }, 20_000);

  test('a new incarnation takes the member over: peers see replaced, and the old writer is superseded', async () => {
    const group = uniqueName('takeover');
    const id = uniqueName('member');
    const old = await store();
    const watcher = await store();
    await old.beat(id, { who: 'old' }, { ttl: 10_000, group });
    const watch = watcher.watch(group)[Symbol.asyncIterator]();
    await nextWithin(watch, 5000, 'snapshot');
    await new Promise((r) => setTimeout(r, 5)); // a later start: an id that sorts higher or lower must not matter
    const restarted = await store();
    await restarted.beat(id, { who: 'new' }, { ttl: 10_000, group });
    const next = (await nextMatching(watch, (e) => e.type !== 'degraded' && e.type !== 'recovered', 5000, 'replaced')) as MemberEvent;
    expect(next.type).toBe('replaced');
    expect(next.member.payload).toEqual({ who: 'new' });
    await expect(old.beat(id, { who: 'old' }, { ttl: 10_000, group })).rejects.toMatchObject({ code: 'MUSTER_SUPERSEDED' });
    // The key is now bound to the new writer's session: the old session's expiry cannot delete it.
    const [kv] = (await (await fetch(`${entry!.url}/v1/kv/muster/heartbeats/${id}`)).json()) as { Session: string }[];
    const sessions = (await (await fetch(`${entry!.url}/v1/session/list`)).json()) as { ID: string; Name: string }[];
    expect(sessions.filter((s) => s.ID === kv!.Session && s.Name === `muster heartbeat ${id}`)).toHaveLength(1);
    await watch.return?.();
    await restarted.remove(id);
  }, 20_000);

  test('a session the server invalidates under a live member deletes its key; the next beat writes it again on a new session', async () => {
    const group = uniqueName('invalidated');
    const id = uniqueName('member');
    const writer = await store();
    const watcher = await store();
    await writer.beat(id, { n: 1 }, { ttl: 10_000, group });
    const watch = watcher.watch(group)[Symbol.asyncIterator]();
    await nextWithin(watch, 5000, 'snapshot');
    const [kv] = (await (await fetch(`${entry!.url}/v1/kv/muster/heartbeats/${id}`)).json()) as { Session: string }[];
    // As a failing node check would: Consul invalidates the session, and behavior=delete takes the key.
    await fetch(`${entry!.url}/v1/session/destroy/${kv!.Session}`, { method: 'PUT' });
    await nextMatching(watch, (e) => e.type === 'left', 5000, 'left');
    await writer.beat(id, { n: 2 }, { ttl: 10_000, group });
    const back = (await nextMatching(watch, (e) => e.type === 'joined', 5000, 'joined again')) as MemberEvent;
    expect(back.member).toMatchObject({ payload: { n: 2 }, alive: true });
    await watch.return?.();
    await writer.remove(id);
  }, 20_000);

  test('the largest payload maxPayloadBytes allows fits in the transaction', async () => {
    // The beat's body carries the payload base64-encoded, and Consul refuses a body over 512 KiB.
    const refused = await store({ maxPayloadBytes: 2 ** 40 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'MUSTER_CONFIG' });
    const limit = Number(/at most (\d+)/.exec((refused as Error).message)?.[1]);
    expect(limit).toBeGreaterThanOrEqual(64 * 1024);
    const writer = await store({ maxPayloadBytes: limit });
    const id = `${uniqueName('big')}-${'m'.repeat(200)}`;
    const payload = 'x'.repeat(limit - 2); // limit bytes of JSON with its quotes
    await writer.beat(id, payload, { ttl: 10_000, group: 'g'.repeat(63) });
    expect((await writer.get(id))?.payload).toBe(payload);
    await expect(writer.beat(id, `${payload}x`, { ttl: 10_000 })).rejects.toMatchObject({ code: 'MUSTER_PAYLOAD_TOO_LARGE' });
    await writer.remove(id);
  }, 20_000);
});
