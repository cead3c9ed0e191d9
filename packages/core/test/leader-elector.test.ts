import { describe, expect, it } from '@jest/globals';
import { LeaderElector, LockLostError, type Lease, type Lock } from '../src/index.js';
import { createLock, type LockBackend } from '../src/adapter.js';
import { simulateCrash } from '../src/testing/index.js';
import { StaticLockBackend } from '../../adapter-static/src/lock.js';

const newLock = (scope: string) => createLock(new StaticLockBackend({ scope }), { timing: { minTtl: 1 } });
const until = async (check: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('LeaderElector', () => {
  it('elects one leader; resign hands over at once; the next leader has a larger token', async () => {
    const scope = `elect-${Math.random()}`;
    const [a, b] = [
      new LeaderElector(newLock(scope), 'leader', { ttl: 60_000 }),
      new LeaderElector(newLock(scope), 'leader', { ttl: 60_000 }),
    ];
    const events: string[] = [];
    const tokens: bigint[] = [];
    for (const [name, e] of [
      ['a', a],
      ['b', b],
    ] as const) {
      e.onElected((lease) => {
        events.push(`${name} elected`);
        tokens.push(lease.token);
      });
      e.onDemoted(() => void events.push(`${name} demoted`));
    }
    const campaigns = [a.campaign(), b.campaign()];
    await until(() => a.isLeader || b.isLeader);
    const [first, second] = a.isLeader ? [a, b] : [b, a];
    expect(second.isLeader).toBe(false);
    await first.resign();
    await until(() => second.isLeader, 2000); // a 60 s ttl: only a release can explain a quick handover
    expect(first.isLeader).toBe(false);
    expect(tokens[1]! > tokens[0]!).toBe(true);
    await second.resign();
    await Promise.all(campaigns);
    expect(events).toEqual([
      `${first === a ? 'a' : 'b'} elected`,
      `${first === a ? 'a' : 'b'} demoted`,
      `${second === a ? 'a' : 'b'} elected`,
      `${second === a ? 'a' : 'b'} demoted`,
    ]);
  });

  it('reports demotion when the lease is lost and campaigns again', async () => {
    const scope = `lost-${Math.random()}`;
    const lock = newLock(scope);
    const elector = new LeaderElector(lock, 'leader', { ttl: 200 });
    const reasons: unknown[] = [];
    let elections = 0;
    elector.onElected(() => void elections++);
    elector.onDemoted((reason) => void reasons.push(reason));
    const campaign = elector.campaign();
    await until(() => elector.isLeader);
    // Another process takes the lock after ours expires: crash our renewals, let a rival win.
    const rivalLock: Lock = newLock(scope);
    (lock as unknown as Record<symbol, () => void>)[simulateCrash]?.call(lock);
    const rival: Lease = await rivalLock.acquire('leader', { ttl: 200, wait: 5000 });
    await rival.release();
    await elector.resign();
    await campaign;
    expect(elections).toBeGreaterThanOrEqual(1);
    expect(reasons.length).toBe(elections);
  });

  it('reports demotion the moment the lease is lost, even while an onElected listener still runs (a leader loop started from it)', async () => {
    // Renewals fail as they would once another holder took the Lease over.
    const backend: LockBackend = {
      holder: 'leader-loop',
      tryAcquire: async () => ({ token: 1n }),
      renew: async (name) => Promise.reject(new LockLostError(name, 'another holder took it')),
      release: async () => undefined,
    };
    const elector = new LeaderElector(createLock(backend, { timing: { minTtl: 1 } }), 'leader', { ttl: 300 });
    let stopAssigning = () => {};
    // The README's shape: onElected((lease) => startAssigning(lease)), where assigning runs until stopped.
    elector.onElected(() => new Promise<void>((resolve) => (stopAssigning = resolve)));
    let demotedAt: number | undefined;
    elector.onDemoted(() => {
      demotedAt ??= performance.now();
      stopAssigning();
    });
    const started = performance.now();
    const campaign = elector.campaign();
    // Before: the elector awaited the listener before watching the lease, so demotion never came.
    await until(() => demotedAt !== undefined, 3000);
    expect(demotedAt! - started).toBeLessThan(1000);
    await elector.resign();
    await campaign;
  });

  it('every onElected listener is told at once, before the demotion, though the first runs the whole term', async () => {
    const scope = `listeners-${Math.random()}`;
    const elector = new LeaderElector(newLock(scope), 'leader', { ttl: 60_000 });
    const order: string[] = [];
    let stopFirst = () => {};
    elector.onElected(() => {
      order.push('first elected');
      return new Promise<void>((resolve) => (stopFirst = resolve));
    });
    elector.onElected(() => void order.push('second elected'));
    elector.onDemoted(() => {
      order.push('demoted');
      stopFirst();
    });
    const campaign = elector.campaign();
    // Before: listeners were awaited one by one, so the second heard of its term only after it ended.
    await until(() => order.includes('second elected'), 3000);
    await elector.resign();
    await campaign;
    expect(order).toEqual(['first elected', 'second elected', 'demoted']);
  });

  it('onDemoted is told though giving the lease up fails (the backend unreachable)', async () => {
    const backend: LockBackend = {
      holder: 'unreachable-release',
      tryAcquire: async () => ({ token: 1n }),
      renew: async (_name, grant) => grant,
      release: async () => Promise.reject(new Error('connect ECONNREFUSED')),
    };
    const elector = new LeaderElector(createLock(backend, { timing: { minTtl: 1 } }), 'leader', { ttl: 60_000 });
    let demoted = false;
    elector.onDemoted(() => void (demoted = true));
    let elected = false;
    elector.onElected(() => void (elected = true));
    const campaign = elector.campaign();
    await until(() => elected, 3000);
    await elector.resign();
    await campaign.catch(() => undefined);
    // Before: the failed release threw past the demotion.
    expect(demoted).toBe(true);
  });

  it('resign tells onDemoted and waits for it before giving the lease up: the next leader starts after the work stopped', async () => {
    const scope = `handover-${Math.random()}`;
    const [a, b] = [
      new LeaderElector(newLock(scope), 'leader', { ttl: 60_000 }),
      new LeaderElector(newLock(scope), 'leader', { ttl: 60_000 }),
    ];
    let working = false;
    let overlap = false;
    a.onElected(() => void (working = true));
    a.onDemoted(async () => {
      await new Promise((r) => setTimeout(r, 300)); // the README's stopAssigning(): drain what runs
      working = false;
    });
    b.onElected(() => void (overlap ||= working));
    const campaigns = [a.campaign()];
    await until(() => a.isLeader);
    campaigns.push(b.campaign());
    await a.resign();
    await until(() => b.isLeader, 2000);
    expect(overlap).toBe(false);
    await b.resign();
    await Promise.all(campaigns);
  });

  it('close() awaited from inside a listener ends the campaign instead of waiting for itself', async () => {
    for (const where of ['onElected', 'onDemoted'] as const) {
      const elector = new LeaderElector(newLock(`reentrant-${Math.random()}`), 'leader', { ttl: 60_000 });
      let closed = false;
      const closeFromListener = async () => {
        await elector.close();
        closed = true;
      };
      if (where === 'onElected') elector.onElected(closeFromListener);
      else elector.onDemoted(closeFromListener);
      const campaign = elector.campaign();
      await until(() => elector.isLeader || closed);
      if (where === 'onDemoted') void elector.resign();
      await until(() => closed, 3000);
      await campaign;
      expect({ where, leader: elector.isLeader }).toEqual({ where, leader: false });
    }
  });

  it('an onElected listener that throws ends the term (the lease is given up, onDemoted told why) and the campaign goes on', async () => {
    const scope = `crash-${Math.random()}`;
    const crashing = new LeaderElector(newLock(scope), 'leader', { ttl: 60_000, cooldown: 60_000 });
    const other = new LeaderElector(newLock(scope), 'leader', { ttl: 60_000 });
    const reasons: unknown[] = [];
    crashing.onElected(() => {
      throw new Error('work crashed');
    });
    crashing.onDemoted((reason) => void reasons.push(reason));
    const campaigns = [crashing.campaign()];
    await until(() => reasons.length > 0);
    campaigns.push(other.campaign());
    await until(() => other.isLeader, 2000); // a 60 s ttl: only a release explains it
    expect(crashing.isLeader).toBe(false);
    expect((reasons[0] as Error).message).toBe('work crashed');
    await Promise.all([crashing.resign(), other.resign()]);
    await Promise.all(campaigns);
  });

  it('the campaign promise resolves on abort of its signal', async () => {
    const controller = new AbortController();
    const elector = new LeaderElector(newLock(`abort-${Math.random()}`), 'leader', { signal: controller.signal, ttl: 1000 });
    const campaign = elector.campaign();
    await until(() => elector.isLeader);
    controller.abort();
    await campaign;
    expect(elector.isLeader).toBe(false);
  });
});

describe('LeaderElector over many terms', () => {
  it('leaves no abort listener behind per term', async () => {
    // In Node since 15; this project's @types/node does not declare it.
    const { getEventListeners } = (await import('node:events')) as unknown as {
      getEventListeners(target: EventTarget, type: string): unknown[];
    };
    let campaignSignal: AbortSignal | undefined;
    let terms = 0;
    // A lock whose every lease is lost right after it is granted: one term per acquire.
    const flapping: Lock = {
      async acquire(name, options) {
        campaignSignal = options?.signal;
        const lost = new AbortController();
        setImmediate(() => lost.abort(new Error('lost')));
        terms++;
        const lease: Lease = {
          name,
          holder: 'me',
          token: BigInt(terms),
          expiresAt: Infinity,
          onLost: lost.signal,
          renew: async () => undefined,
          release: async () => undefined,
          [Symbol.asyncDispose]: async () => undefined,
        };
        return lease;
      },
      tryAcquire: async () => undefined,
      withLock: async () => {
        throw new Error('unused');
      },
      close: async () => undefined,
    };
    const elector = new LeaderElector(flapping, 'flapping');
    const campaign = elector.campaign();
    await until(() => terms >= 30);
    expect(campaignSignal).toBeDefined();
    expect(getEventListeners(campaignSignal!, 'abort').length).toBeLessThanOrEqual(2);
    await elector.resign();
    await campaign;
  });
});
