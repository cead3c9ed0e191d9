import type { Clock } from '../clock.js';
import type { HeartbeatEvent, HeartbeatStore } from '../ports/heartbeat.js';
import type { Lock } from '../ports/lock.js';
import { assert, eventually, expectCode, nextMatching, skipCase, uniqueName, wait, type SuiteRunner } from './runner.js';

/**
 * A backend that hangs, for the clients the suite's `factory` made in the current test: from
 * `begin()` their calls get neither an answer nor an error (a paused server, a connection that
 * swallows bytes) until `end()`. What they sent meanwhile may reach the backend after `end()` and
 * take effect late, as a paused server works through its queue (a proxy in front of the server
 * that holds every byte back does exactly this). Nothing else may hang: the suite's other clients,
 * made after `end()`, must reach the backend.
 */
export interface BackendHang {
  begin(): Promise<void>;
  end(): Promise<void>;
}

/** How late past its own bound a call may settle while the backend hangs (a timer on a loaded machine). */
const slack = 1500;

type Outcome = { readonly value: unknown } | { readonly error: unknown } | 'hung';

/** The promise's outcome, or 'hung' when it has not settled within `ms`. */
async function outcomeWithin(promise: Promise<unknown>, ms: number): Promise<Outcome> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asserts the call settled within `ms` with an error of `code`. */
async function settlesWith(promise: Promise<unknown>, ms: number, code: string, what: string): Promise<void> {
  const outcome = await outcomeWithin(promise, ms);
  if (outcome === 'hung') assert.fail(`${what} had not settled ${ms} ms after it was called while the backend hung`);
  if ('value' in outcome) assert.fail(`${what}: expected an error with code ${code}, but it succeeded`);
  const { error } = outcome as { error: unknown };
  assert.equal(
    (error as { code?: unknown })?.code,
    code,
    `${what}: expected an error with code ${code}, got ${(error as Error)?.message ?? String(error)}`,
  );
}

/** Runs `during` with the backend hung, and always ends the hang. */
async function whileHung<T>(hang: BackendHang, during: () => Promise<T>): Promise<T> {
  await hang.begin();
  try {
    return await during();
  } finally {
    await hang.end();
  }
}

const noHang = 'the adapter provides no way to make its backend hang (options.hang)';

export interface LockHangCases {
  readonly test: (name: string, fn: () => Promise<void>) => void;
  /** A new client, closed when the test ends. */
  readonly client: () => Promise<Lock>;
  readonly hang: BackendHang | undefined;
  readonly ttl: number;
  readonly clock: Clock;
}

/**
 * What Lock promises while its backend hangs: acquire rejects at its `wait` and at an abort
 * without waiting for the backend, a grant that comes back afterwards is released rather than kept
 * for its ttl, and a held lease is lost by its `expiresAt` from a timer.
 */
export function lockHangCases(runner: SuiteRunner, { test, client, hang, ttl, clock }: LockHangCases): void {
  const long = Math.max(ttl * 20, 60_000);
  // Well inside `long`: a late grant that was kept rather than released would hold the lock past it.
  const recovery = ttl * 5 + 10_000;
  const cases = {
    wait: "acquire's wait ends it while the backend hangs (MUSTER_TIMEOUT), and a grant that comes back later is released",
    abort: 'an abort ends acquire while the backend hangs (MUSTER_ABORTED), and a grant that comes back later is released',
    lost: 'a held lease is lost by its expiresAt while the backend hangs, and another contender takes over after it',
  };
  if (!hang) {
    for (const name of Object.values(cases)) skipCase(runner, name, noHang);
    return;
  }

  test(cases.wait, async () => {
    const [a, b] = [await client(), await client()];
    const name = uniqueName('hang-wait');
    const waitMs = Math.max(300, ttl / 4);
    await whileHung(hang, () =>
      // An attempt is given a second to answer however short the wait (lock-client.ts).
      settlesWith(
        a.acquire(name, { ttl: long, wait: waitMs }),
        Math.max(waitMs, 1000) + slack,
        'MUSTER_TIMEOUT',
        `acquire({ wait: ${waitMs} })`,
      ),
    );
    const next = await eventually(
      `the lock to be free after the hang (a grant that came back after acquire gave up must be released, not held for its ${long} ms ttl)`,
      () => b.tryAcquire(name, { ttl }),
      recovery,
    );
    await next.release();
  });

  test(cases.abort, async () => {
    const [a, b] = [await client(), await client()];
    const name = uniqueName('hang-abort');
    await whileHung(hang, async () => {
      const controller = new AbortController();
      const pending = a.acquire(name, { ttl: long, signal: controller.signal });
      // Let the attempt reach the hung backend first.
      await wait(100);
      controller.abort();
      await settlesWith(pending, slack, 'MUSTER_ABORTED', 'acquire() aborted while the backend hung');
    });
    const next = await eventually(
      `the lock to be free after the hang (a grant that came back after the abort must be released, not held for its ${long} ms ttl)`,
      () => b.tryAcquire(name, { ttl }),
      recovery,
    );
    await next.release();
  });

  test(cases.lost, async () => {
    const [a, b] = [await client(), await client()];
    const name = uniqueName('hang-lost');
    const lease = await a.acquire(name, { ttl });
    await whileHung(hang, async () => {
      const lost = new Promise<number>((resolve) => lease.onLost.addEventListener('abort', () => resolve(clock.now()), { once: true }));
      const lostAt = await outcomeWithin(lost, ttl + slack);
      if (lostAt === 'hung') assert.fail(`onLost had not fired ${ttl + slack} ms into the hang (ttl ${ttl} ms)`);
      const at = (lostAt as { value: number }).value;
      assert.ok(at <= lease.expiresAt + slack, `onLost fired ${Math.round(at - lease.expiresAt)} ms after the lease's expiresAt`);
    });
    await expectCode(lease.renew(), 'MUSTER_LOCK_LOST', 'renew() of the lease lost during the hang');
    const next = await b.acquire(name, { ttl, wait: recovery });
    assert.ok(next.token > lease.token, `the next holder's token ${next.token} is not above the lost lease's ${lease.token}`);
    await next.release();
  });
}

export interface HeartbeatHangCases {
  readonly test: (name: string, fn: () => Promise<void>) => void;
  /** A new store client, closed when the test ends. */
  readonly store: () => Promise<HeartbeatStore>;
  readonly hang: BackendHang | undefined;
  readonly ttl: number;
  readonly propagation: number;
}

/**
 * What HeartbeatStore promises while its backend hangs: a beat is abandoned at its ttl, the next
 * one lands after the hang, and a watcher that hears nothing judges its members on its own clock
 * (stale after their ttl, never alive for ever), then sees them again after the hang.
 */
export function heartbeatHangCases(runner: SuiteRunner, { test, store, hang, ttl, propagation }: HeartbeatHangCases): void {
  const cases = {
    beat: 'a beat is abandoned at its ttl while the backend hangs (MUSTER_TIMEOUT), and the next one lands after it',
    watch: 'a watcher cut off by a hang shows its members stale after their ttl, and alive again after the hang',
  };
  if (!hang) {
    for (const name of Object.values(cases)) skipCase(runner, name, noHang);
    return;
  }

  test(cases.beat, async () => {
    const hb = await store();
    const id = uniqueName('hang-beat');
    await hb.beat(id, { n: 1 }, { ttl: ttl * 20 });
    await whileHung(hang, () => settlesWith(hb.beat(id, { n: 2 }, { ttl }), ttl + slack, 'MUSTER_TIMEOUT', `beat() with ttl ${ttl}`));
    await hb.beat(id, { n: 3 }, { ttl: ttl * 20 });
    await eventually(
      'the beat after the hang to be readable',
      async () => ((await hb.get(id))?.payload as { n?: number } | undefined)?.n === 3 || undefined,
      propagation,
    );
    await hb.remove(id);
  });

  test(cases.watch, async () => {
    const [writer, watcher] = [await store(), await store()];
    const group = uniqueName('hang-watch');
    const stop = new AbortController();
    const beating = (async () => {
      while (!stop.signal.aborted) {
        await writer.beat('m', { at: Date.now() }, { ttl, group, signal: stop.signal }).catch(() => undefined);
        await wait(ttl / 3);
      }
    })();
    const watch = watcher.watch(group)[Symbol.asyncIterator]();
    const aliveM = (e: HeartbeatEvent) => e.members.some((m) => m.memberId === 'm' && m.alive);
    try {
      await nextMatching(watch, aliveM, propagation, "'m' alive");
      // No news reaches the watcher: only its own clock can end m's ttl.
      await whileHung(hang, () => nextMatching(watch, (e) => !aliveM(e), ttl + slack, "'m' stale while the watcher hears nothing"));
      await nextMatching(watch, aliveM, propagation + 2 * ttl + Math.max(5000, 2 * ttl), "'m' alive again after the hang");
    } finally {
      stop.abort();
      await beating;
      await watch.return?.();
      await writer.remove('m').catch(() => undefined);
    }
  });
}
