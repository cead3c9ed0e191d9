// The drain's order: the farewell to registered clients at once, every connection served for the
// grace (control connections too), then each ended once answered, the rest cut at the timeout.
import { describe, expect, it } from '@jest/globals';
import type { Clock } from '@muster/core';
import type { Event } from '../../src/protocol/event.js';
import { drainClients, type DrainableClient } from '../../src/proxy/drain.js';

class FakeClient implements DrainableClient {
  inFlight = 0;
  readonly registered: Set<string>;
  readonly told: Event[] = [];
  endRequested = false;
  closed = false;
  constructor(
    readonly name: string,
    readonly all: Set<FakeClient>,
    registered: string[] = [],
    readonly driverName?: string,
  ) {
    this.registered = new Set(registered);
    all.add(this);
  }
  pushEvent(event: Event): boolean {
    if (!this.registered.has(event.type)) return false;
    this.told.push(event);
    return true;
  }
  endWhenAnswered(): void {
    this.endRequested = true;
  }
  /** What the driver does: closes its side (on FIN, or when it moves away). */
  leave(): void {
    this.all.delete(this);
  }
  close(): void {
    this.closed = true;
    this.all.delete(this);
  }
}

/** A clock moved by hand; counts its readings, so a test knows the drain has looked at it. */
class ManualClock implements Clock {
  ms = 1_000_000;
  readings = 0;
  now(): number {
    this.readings++;
    return this.ms;
  }
}

const farewell: Event = { type: 'TOPOLOGY_CHANGE', change: 'REMOVED_NODE', address: { address: '127.0.0.1', port: 9042 } };

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; !check(); i++) {
    if (i > 2000) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('drainClients', () => {
  it('tells registered clients the farewell at once and closes nothing during the grace, control connections included', async () => {
    const clients = new Set<FakeClient>();
    const control = new FakeClient('control', clients, ['STATUS_CHANGE', 'TOPOLOGY_CHANGE']);
    const pool = new FakeClient('pool', clients);
    const mover = new FakeClient('mover', clients);
    const clock = new ManualClock();
    const drained = drainClients(clients, { grace: 60_000, timeout: 120_000, farewell: [farewell], clock });
    expect(control.told).toEqual([farewell]);
    expect(pool.told).toEqual([]);
    // The drain polls its clock while it waits: some readings later, still nothing ended.
    await until('the drain to poll its clock', () => clock.readings > 5);
    expect([control.endRequested, pool.endRequested, mover.endRequested]).toEqual([false, false, false]);
    control.leave(); // cassandra-driver moved its control connection away and closed it
    mover.leave();
    pool.leave();
    await expect(drained).resolves.toEqual({ left: 3, early: 0, ended: 0, cut: 0 });
  });

  it('judges the grace on its clock (monotonic by default), not on the wall clock', async () => {
    const clients = new Set<FakeClient>();
    const control = new FakeClient('control', clients, ['TOPOLOGY_CHANGE']);
    const clock = new ManualClock();
    const drained = drainClients(clients, { grace: 5_000, timeout: 10_000, clock });
    await until('the drain to poll its clock', () => clock.readings > 5);
    expect(control.endRequested).toBe(false);
    clock.ms += 5_000;
    await until('the control connection to be ended after the grace', () => control.endRequested);
    control.leave();
    await expect(drained).resolves.toEqual({ left: 0, early: 0, ended: 1, cut: 0 });
  });

  it('after the grace, asks the rest to end after their answers; at the timeout it cuts what is left', async () => {
    const clients = new Set<FakeClient>();
    const idle = new FakeClient('idle', clients);
    const stuck = new FakeClient('stuck', clients);
    stuck.inFlight = 1;
    const drained = drainClients(clients, { grace: 0, timeout: 200 });
    await until('both to be asked to end', () => idle.endRequested && stuck.endRequested);
    idle.leave(); // the driver saw the FIN and closed
    await expect(drained).resolves.toEqual({ left: 0, early: 0, ended: 1, cut: 1 });
    expect(stuck.closed).toBe(true);
    expect(idle.closed).toBe(false);
  });

  // gocql cannot leave a host without losing what is in flight there (departure.ts): its pool
  // connections are ended at once, at their first idle moment, and its control connection only
  // once they are gone (while it is here, gocql hears no peer's DOWN, which would close the pool
  // with requests in flight). Other drivers' connections wait for the grace as before.
  it("ends gocql's pool connections at once, its control connection after them, and leaves other drivers alone", async () => {
    const clients = new Set<FakeClient>();
    const gocql = 'github.com/apache/cassandra-gocql-driver';
    const pool = new FakeClient('gocql pool', clients, [], gocql);
    const control = new FakeClient('gocql control', clients, ['STATUS_CHANGE', 'TOPOLOGY_CHANGE'], gocql);
    const node = new FakeClient('cassandra-driver', clients, [], 'DataStax Node.js Driver');
    const clock = new ManualClock();
    const drained = drainClients(clients, { grace: 60_000, timeout: 120_000, farewell: [farewell], clock });
    expect([pool.endRequested, control.endRequested, node.endRequested]).toEqual([true, false, false]);
    await until('the drain to poll its clock', () => clock.readings > 5);
    expect(control.endRequested).toBe(false);
    pool.leave(); // gocql saw the FIN and dropped the connection from its pool
    await until('the control connection to be ended', () => control.endRequested);
    control.leave();
    expect(node.endRequested).toBe(false);
    node.leave(); // cassandra-driver moved away by itself
    await expect(drained).resolves.toEqual({ left: 1, early: 2, ended: 0, cut: 0 });
  });

  // Failed before: the drain ended as soon as its clients had gone (gocql's, closed early, go at
  // once), and a restart could bring the instance back before drivers had heard it removed.
  it('lasts at least its linger while peers are up, even once every client has gone', async () => {
    const clients = new Set<FakeClient>();
    const gocql = new FakeClient('gocql pool', clients, [], 'github.com/apache/cassandra-gocql-driver');
    const clock = new ManualClock();
    let done = false;
    const drained = drainClients(clients, { grace: 60_000, linger: 5_000, timeout: 120_000, clock }).then((report) => {
      done = true;
      return report;
    });
    gocql.leave();
    const readings = clock.readings;
    await until('the drain to poll its clock', () => clock.readings > readings + 5);
    expect(done).toBe(false);
    clock.ms += 5_000;
    await expect(drained).resolves.toEqual({ left: 0, early: 1, ended: 0, cut: 0 });
  });
});
