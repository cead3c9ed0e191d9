import type { HeartbeatEvent, HeartbeatStore, MemberHeartbeat } from '../ports/heartbeat.js';
import { heartbeatHangCases, type BackendHang } from './hang.js';
import { assert, cleaningRunner, eventually, expectCode, nextMatching, nextWithin, uniqueName, wait, type SuiteRunner } from './runner.js';

export interface HeartbeatSuiteOptions {
  readonly name: string;
  /** A new, independent store client (its own incarnation), as another process would have. */
  readonly factory: () => HeartbeatStore | Promise<HeartbeatStore>;
  /** A short ttl the backend honours (ms); staleness tests wait about this long. */
  readonly ttl: number;
  /** The adapter's payload limit in bytes (default 4096). */
  readonly maxPayloadBytes?: number;
  readonly propagation?: number;
  readonly timeout?: number;
  /**
   * Makes the backend hang for the clients the factory made (see BackendHang). Without it the cases
   * that need a hanging backend (a beat abandoned at its ttl, a cut-off watcher judging on its own
   * clock) are skipped, and their names say so.
   */
  readonly hang?: BackendHang;
}

type MemberEvent = Extract<HeartbeatEvent, { member: MemberHeartbeat }>;

/**
 * The HeartbeatStore contract: beat/get/list round-trip the payload, a member goes stale after its
 * ttl and alive again on a beat, oversized payloads are refused, remove works, watch reports it all,
 * and an older incarnation cannot overwrite a newer one.
 */
export function heartbeatConformance(runner: SuiteRunner, options: HeartbeatSuiteOptions): void {
  const { ttl } = options;
  const propagation = options.propagation ?? 10_000;
  const timeout = options.timeout ?? ttl * 8 + propagation * 3 + 20_000;
  const { open, test } = cleaningRunner(runner, timeout);
  const store = () => open(options.factory);

  runner.describe(`HeartbeatStore conformance: ${options.name}`, () => {
    test('beat, get and list round-trip the payload', async () => {
      const hb = await store();
      const group = uniqueName('group');
      const payload = { load: 0.5, version: '1.2.3', counters: { requests: 7 }, tags: ['a', 'b'], ok: true, none: null };
      await hb.beat('member-b', payload, { ttl: ttl * 20, group });
      await hb.beat('member-a', { load: 1 }, { ttl: ttl * 20, group });
      const got = await eventually('member-b to be readable', () => hb.get('member-b'), propagation);
      assert.deepEqual(got.payload, payload);
      assert.equal(got.group, group);
      assert.equal(got.alive, true);
      assert.equal(typeof got.incarnation, 'string');
      const listed = await eventually(
        'both members listed',
        async () => {
          const l = await hb.list(group);
          return l.length === 2 ? l : undefined;
        },
        propagation,
      );
      assert.deepEqual(
        listed.map((m) => m.memberId),
        ['member-a', 'member-b'],
      );
      await hb.remove('member-a');
      await hb.remove('member-b');
    });

    test('a member goes stale after its ttl and alive again when it beats', async () => {
      const hb = await store();
      const id = uniqueName('stale');
      await hb.beat(id, { n: 1 }, { ttl });
      await eventually('the member to be seen alive', async () => ((await hb.get(id))?.alive === true ? true : undefined), propagation);
      const stale = await eventually(
        'the member to go stale',
        async () => ((await hb.get(id))?.alive === false ? true : undefined),
        ttl * 4 + propagation,
      );
      assert.ok(stale);
      await hb.beat(id, { n: 2 }, { ttl: ttl * 20 });
      await eventually('the member to be alive again', async () => ((await hb.get(id))?.alive === true ? true : undefined), propagation);
      await hb.remove(id);
    });

    test('an oversized payload is refused before anything is written', async () => {
      const hb = await store();
      const id = uniqueName('big');
      const limit = options.maxPayloadBytes ?? 4096;
      await expectCode(
        hb.beat(id, { blob: 'x'.repeat(limit + 1) }, { ttl }),
        'MUSTER_PAYLOAD_TOO_LARGE',
        'beat() with an oversized payload',
      );
      await wait(Math.min(500, propagation));
      assert.equal(await hb.get(id), undefined, 'a refused beat was written');
    });

    test('remove deletes the member', async () => {
      const hb = await store();
      const id = uniqueName('removed');
      await hb.beat(id, {}, { ttl: ttl * 20 });
      await eventually('the member to exist', () => hb.get(id), propagation);
      await hb.remove(id);
      await eventually('the member to be gone', async () => ((await hb.get(id)) === undefined ? true : undefined), propagation);
    });

    test('watch reports snapshot, joined, updated, stale, alive and left', async () => {
      const [writer, watcher] = [await store(), await store()];
      const group = uniqueName('watched');
      await writer.beat('existing', { n: 0 }, { ttl: ttl * 40, group });
      await eventually(
        'the first member to be listed',
        async () => ((await watcher.list(group)).length === 1 ? true : undefined),
        propagation,
      );
      const watch = watcher.watch(group)[Symbol.asyncIterator]();
      const snapshot = await nextWithin(watch, propagation, 'initial snapshot');
      assert.equal(snapshot.type, 'snapshot');
      assert.deepEqual(
        (snapshot as { members: readonly MemberHeartbeat[] }).members.map((m) => m.memberId),
        ['existing'],
      );
      const member = (type: MemberEvent['type']) => (e: HeartbeatEvent) =>
        e.type === type && (e as MemberEvent).member.memberId === 'joiner';

      await writer.beat('joiner', { n: 1 }, { ttl, group });
      const joined = (await nextMatching(watch, member('joined'), propagation, 'joined event')) as MemberEvent;
      assert.deepEqual(
        joined.members.map((m) => m.memberId),
        ['existing', 'joiner'],
      );
      await writer.beat('joiner', { n: 2 }, { ttl, group });
      const updated = (await nextMatching(watch, member('updated'), propagation, 'updated event')) as MemberEvent;
      assert.deepEqual(updated.member.payload, { n: 2 });
      const stale = (await nextMatching(watch, member('stale'), ttl * 4 + propagation, 'stale event')) as MemberEvent;
      assert.equal(stale.member.alive, false);
      // Back with a changed payload: watchers of liveness must still see it come alive.
      await writer.beat('joiner', { n: 3 }, { ttl: ttl * 40, group });
      const alive = (await nextMatching(watch, member('alive'), propagation, 'alive event')) as MemberEvent;
      assert.equal(alive.member.alive, true);
      assert.deepEqual(alive.member.payload, { n: 3 });
      await writer.remove('joiner');
      const left = (await nextMatching(watch, member('left'), propagation, 'left event')) as MemberEvent;
      assert.deepEqual(
        left.members.map((m) => m.memberId),
        ['existing'],
      );
      await watch.return?.();
      await writer.remove('existing');
    });

    test('a restarted member takes its record over at once, whatever its incarnation id', async () => {
      // Created first, so a clock-ordered id would sort lower, as on a host whose clock is behind.
      const restarted = await store();
      await wait(5);
      const old = await store();
      const id = uniqueName('restart');
      await old.beat(id, { who: 'old' }, { ttl: ttl * 20 });
      await restarted.beat(id, { who: 'restarted' }, { ttl: ttl * 20 });
      const got = await eventually(
        "the restarted member's record to be readable",
        async () => {
          const m = await old.get(id);
          return m && (m.payload as { who?: string }).who === 'restarted' ? m : undefined;
        },
        propagation,
      );
      assert.equal(got.alive, true);
      await expectCode(old.beat(id, { who: 'old again' }, { ttl: ttl * 20 }), 'MUSTER_SUPERSEDED', 'beat() by the replaced incarnation');
      await restarted.beat(id, { who: 'restarted again' }, { ttl: ttl * 20 });
      await restarted.remove(id);
    });

    test('an older incarnation cannot overwrite a newer one', async () => {
      const older = await store();
      await wait(5);
      const newer = await store();
      const id = uniqueName('incarnation');
      await older.beat(id, { who: 'older' }, { ttl: ttl * 20 });
      await newer.beat(id, { who: 'newer' }, { ttl: ttl * 20 });
      await expectCode(older.beat(id, { who: 'older again' }, { ttl: ttl * 20 }), 'MUSTER_SUPERSEDED', 'beat() by the older incarnation');
      const got = await eventually('the record to be readable', () => newer.get(id), propagation);
      assert.deepEqual(got.payload, { who: 'newer' });
      await newer.remove(id);
    });

    heartbeatHangCases(runner, { test, store, hang: options.hang, ttl, propagation });
  });
}
