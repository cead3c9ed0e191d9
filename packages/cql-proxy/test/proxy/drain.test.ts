// The drain's order: control connections first, others after the grace once answered, the rest cut.
import { describe, expect, it } from '@jest/globals';
import { drainClients, type DrainableClient } from '../../src/proxy/drain.js';

class FakeClient implements DrainableClient {
  inFlight = 0;
  readonly registered: Set<string>;
  endRequested = false;
  closed = false;
  constructor(
    readonly name: string,
    readonly all: Set<FakeClient>,
    registered: string[] = [],
  ) {
    this.registered = new Set(registered);
    all.add(this);
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

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; !check(); i++) {
    if (i > 2000) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe('drainClients', () => {
  it('ends control connections at once, leaves the others to the drivers during the grace, then ends them', async () => {
    const clients = new Set<FakeClient>();
    const control = new FakeClient('control', clients, ['STATUS_CHANGE']);
    const pool = new FakeClient('pool', clients);
    const mover = new FakeClient('mover', clients);
    const drained = drainClients(clients, { grace: 60_000, timeout: 120_000 });
    await until('the control connection to be ended', () => control.endRequested);
    expect(pool.endRequested).toBe(false);
    control.leave();
    mover.leave();
    pool.leave();
    await expect(drained).resolves.toEqual({ left: 2, ended: 1, cut: 0 });
    expect(mover.endRequested).toBe(false);
  });

  it('after the grace, asks the rest to end after their answers; at the timeout it cuts what is left', async () => {
    const clients = new Set<FakeClient>();
    const idle = new FakeClient('idle', clients);
    const stuck = new FakeClient('stuck', clients);
    stuck.inFlight = 1;
    const drained = drainClients(clients, { grace: 0, timeout: 200 });
    await until('both to be asked to end', () => idle.endRequested && stuck.endRequested);
    idle.leave(); // the driver saw the FIN and closed
    await expect(drained).resolves.toEqual({ left: 0, ended: 1, cut: 1 });
    expect(stuck.closed).toBe(true);
    expect(idle.closed).toBe(false);
  });
});
