// The scheduler on the static adapter, in one process: the leader and a worker crash (renewals
// and beats stop without a release, the in-process stand-in for SIGKILL), a leader whose lease
// silently lapses keeps writing, and the table must come out whole.
import { afterEach, describe, expect, test } from '@jest/globals';
import { StaleTokenError } from '@muster/core';
import { sleep } from '@muster/core/adapter';
import { InProcessCluster, type Master } from '../src/index.js';
import { violations } from './invariants.js';

// A multiple of 3 ms: core's lock client hands ttl × 2/3 and its half to AbortSignal.timeout(),
// which throws on a fraction (reported; until fixed, a lease like 1000 ms fails every renewal).
const leaseTtl = 1200;
const settings = { leaseTtl, heartbeatTtl: 600, beatInterval: 100, pollInterval: 40, assignInterval: 80, capacity: 2 };
let cluster: InProcessCluster | undefined;
let events: { who: string; event: string }[] = [];
const log = (who: string) => (event: string) => void events.push({ who, event });
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
  events = [];
});

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeout = 10_000): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const tasks = (n: number, prefix = 't') =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${String(i).padStart(2, '0')}`, durationMs: 120 + ((i * 37) % 200) }));

describe('scheduler failover, in process (static adapter)', () => {
  test('leader and worker crash: a new leader within the lease bound, no task lost or run twice at once, stale writes refused', async () => {
    cluster = await InProcessCluster.start({ masters: 3, workers: 3, settings, log });
    const { store } = cluster;
    await store.submit(tasks(30));
    const first = await until('a leader', () => cluster!.leader());
    const firstToken = first.token!;
    await until('work under way', async () => (await store.tasks()).some((t) => t.status === 'done'));

    // Leadership held steadily while its lease renews: one election so far, no demotion.
    expect(events.filter((e) => e.event === 'elected' || e.event === 'demoted')).toEqual([{ who: first.id, event: 'elected' }]);
    const victim = await until('a worker running a task', () => cluster!.workers.find((w) => w.running.length > 0));
    const crashedAt = new Map<string, number>();
    await victim.crash();
    crashedAt.set(victim.id, Date.now());
    const killedAt = Date.now();
    await first.crash();

    const second = await until('a new leader', () => cluster!.masters.find((m) => m !== first && m.isLeader));
    const takeover = Date.now() - killedAt;
    // The bound: a lease ttl, plus one acquire retry period (ttl × 2/15), plus scheduling slack.
    expect(takeover).toBeLessThanOrEqual(leaseTtl + (leaseTtl * 2) / 15 + 400);
    expect(second.token!).toBeGreaterThan(firstToken);

    // The write a resumed old leader would make, deliberately: refused.
    await expect(store.assign(firstToken, first.id, [])).rejects.toBeInstanceOf(StaleTokenError);

    await until('every task done', async () => (await store.tasks()).every((t) => t.status === 'done'), 20_000);
    const state = await store.state();
    expect(violations(state, crashedAt)).toEqual([]);
    // The crashed worker's unfinished attempt went to someone else.
    expect(state.runs.some((r) => r.worker === victim.id && r.endedAt === undefined)).toBe(true);
    expect(state.tasks.filter((t) => t.attempt > 1).length).toBeGreaterThan(0);
    expect(state.fencedWrites.filter((w) => w.rejectedBecause !== undefined).map((w) => w.token)).toContain(firstToken.toString());
  }, 30_000);

  test('a leader whose lease lapses without it noticing keeps writing, and every write after its successor sealed is refused', async () => {
    cluster = await InProcessCluster.start({ masters: 2, workers: 2, settings, log });
    const { store } = cluster;
    await store.submit(tasks(10, 'a'));
    const zombie: Master = await until('a leader', () => cluster!.leader());
    const zombieToken = zombie.token!;
    zombie.freezeLease(); // a pause: no renewals, no release, no onLost — it still thinks it leads

    const successor = await until('the successor', () => cluster!.masters.find((m) => m !== zombie && m.isLeader), 5000);
    expect(successor.token!).toBeGreaterThan(zombieToken);
    // The zombie's next round is refused, and it stops leading on that refusal.
    await until('the zombie fenced out', () => !zombie.isLeader, 3000);
    await store.submit(tasks(10, 'b'));
    await until('every task done', async () => (await store.tasks()).every((t) => t.status === 'done'), 20_000);

    const state = await store.state();
    expect(violations(state, new Map())).toEqual([]);
    const refused = state.fencedWrites.filter((w) => w.rejectedBecause !== undefined);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((w) => w.leader === zombie.id && w.token === zombieToken.toString())).toBe(true);
    const sealedAt = state.fencedWrites.find((w) => w.leader === successor.id)!.at;
    expect(state.fencedWrites.filter((w) => w.leader === zombie.id && w.at > sealedAt && w.rejectedBecause === undefined)).toEqual([]);
  }, 30_000);
});
