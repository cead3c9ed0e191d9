// The conformance kit's hang cases must fail implementations that wait on a hanging backend or
// judge nothing on their own clock, and must be skipped (saying why) when the adapter cannot hang.
import { describe, expect, it } from '@jest/globals';
import type { HeartbeatStore, Lease, Lock } from '../src/index.js';
import { createHeartbeatStore, createLock } from '../src/adapter.js';
import { heartbeatConformance, lockConformance } from '../src/testing/index.js';
import { failures } from './suite-failures.js';
import { StaticLockBackend } from '../../adapter-static/src/lock.js';
import { StaticHeartbeatBackend } from '../../adapter-static/src/heartbeat.js';
import { Gate, gatedHeartbeatBackend, gatedLockBackend } from '../../adapter-static/test/gated-backends.js';

const scope = () => `hang-self-${Math.random()}`;
const hangCases = /hang/;

/** A correct lock client over a static table behind `gate`. */
const gatedLock = (gate: Gate, tables: string) =>
  createLock(gatedLockBackend(new StaticLockBackend({ scope: tables }), gate), { timing: { minTtl: 1 } });

/** `target` with some members replaced; methods stay bound to it (its private fields need that). */
function overriding<T extends object>(target: T, replaced: Partial<T>): T {
  return new Proxy(target, {
    get(t, key) {
      if (Object.prototype.hasOwnProperty.call(replaced, key)) return replaced[key as keyof T];
      const value: unknown = Reflect.get(t, key, t);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(t) : value;
    },
  });
}

describe('the conformance kit hang cases', () => {
  /** The hang cases a lock fails when `broken` wraps a correct one over a static table behind a gate. */
  const lockFailures = (broken: (lock: Lock) => Lock) => {
    const gate = new Gate();
    const tables = scope();
    return failures(
      (runner) => lockConformance(runner, { name: 'broken', ttl: 300, hang: gate.hang, factory: () => broken(gatedLock(gate, tables)) }),
      hangCases,
    );
  };

  it('fail a lock whose acquire waits on a hanging backend past its wait', async () => {
    const failed = await lockFailures((lock) =>
      overriding(lock, { acquire: (name, options) => lock.acquire(name, { ...options, wait: undefined }) }),
    );
    expect(failed).toEqual([
      "acquire's wait ends it while the backend hangs (MUSTER_TIMEOUT), and a grant that comes back later is released",
    ]);
  }, 60_000);

  it('fail a lock whose lease does not give up while the backend hangs', async () => {
    const never = new AbortController().signal;
    const keepsBelieving = (lease: Lease): Lease => overriding(lease, { onLost: never });
    const failed = await lockFailures((lock) =>
      overriding(lock, { acquire: async (name, options) => keepsBelieving(await lock.acquire(name, options)) }),
    );
    expect(failed).toEqual(['a held lease is lost by its expiresAt while the backend hangs, and another contender takes over after it']);
  }, 60_000);

  it('fail a heartbeat store whose beat waits for a hanging backend, and one whose watch judges nothing on its own clock', async () => {
    const gate = new Gate();
    const tables = scope();
    const store = (clock?: { now(): number }) =>
      createHeartbeatStore(gatedHeartbeatBackend(new StaticHeartbeatBackend({ scope: tables }), gate), clock ? { clock } : {});
    const suite = (factory: () => HeartbeatStore) => (runner: Parameters<typeof heartbeatConformance>[0]) =>
      heartbeatConformance(runner, { name: 'broken', ttl: 200, propagation: 1000, hang: gate.hang, factory });
    const waitsOut = (s: HeartbeatStore): HeartbeatStore =>
      overriding(s, {
        beat: async (...args: Parameters<HeartbeatStore['beat']>) => {
          await gate.pass(undefined);
          return s.beat(...args);
        },
      });
    expect(
      await failures(
        suite(() => waitsOut(store())),
        hangCases,
      ),
    ).toEqual(['a beat is abandoned at its ttl while the backend hangs (MUSTER_TIMEOUT), and the next one lands after it']);
    // A clock that stands still: nothing ever goes stale without news from the backend.
    expect(
      await failures(
        suite(() => store({ now: () => 0 })),
        hangCases,
      ),
    ).toEqual(['a watcher cut off by a hang shows its members stale after their ttl, and alive again after the hang']);
  }, 60_000);

  it('are skipped, saying why, when the adapter cannot make its backend hang', async () => {
    const names: string[] = [];
    const runner = { describe: (_: string, fn: () => void) => fn(), test: (name: string) => void names.push(name) };
    lockConformance(runner, { name: 'no hang', ttl: 300, factory: () => createLock(new StaticLockBackend({ scope: scope() })) });
    heartbeatConformance(runner, {
      name: 'no hang',
      ttl: 300,
      factory: () => createHeartbeatStore(new StaticHeartbeatBackend({ scope: scope() })),
    });
    const skipped = names.filter((n) => n.includes('(skipped: the adapter provides no way to make its backend hang (options.hang))'));
    expect(skipped).toHaveLength(5);
  });
});
