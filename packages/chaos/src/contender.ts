import { createMuster, MusterError, type Lease, type Muster } from '@muster/core';
import { sleep } from '@muster/core/adapter';
import { simulateCrash } from '@muster/core/testing';
import type { LockEvent } from './history.js';
import type { BeatPayload, ContenderSpec } from './protocol.js';
import { Random } from './random.js';
import { realNow, SteppedClock } from './stepped-clock.js';

export interface ContenderLink {
  event(event: Exclude<LockEvent, { kind: 'write' }>): void;
  /** Sends a protected write to the fenced resource; resolves whether it was accepted. */
  write(write: { at: number; who: string; token: string; holderNow: number; expiresAt: number }): Promise<boolean>;
  log(message: string): void;
}

/**
 * One contender, used the way the port docs tell an application to: acquire, do fenced writes
 * while `onLost` has not fired, release after a while, contend again. It also beats its member's
 * heartbeat. Everything goes through the public API of whatever adapter the config names.
 */
export class Contender {
  readonly spec: ContenderSpec;
  readonly clock: SteppedClock;
  readonly #link: ContenderLink;
  readonly #random: Random;
  readonly #stop = new AbortController();
  #muster: Muster | undefined;
  #running: Promise<unknown> | undefined;

  constructor(spec: ContenderSpec, link: ContenderLink) {
    this.spec = spec;
    this.clock = new SteppedClock(spec.clockOffset);
    this.#link = link;
    this.#random = new Random(spec.seed);
  }

  async start(): Promise<void> {
    this.#muster = await createMuster(this.spec.config, { clock: this.clock });
    this.#link.event({ kind: 'spawned', at: realNow(), who: this.spec.who });
    this.#running = Promise.allSettled([this.#contend(this.#muster), this.#beat(this.#muster)]);
  }

  /** Stops as a crashed process would: no release, no last beat (in-process hosts only). */
  crash(): void {
    this.#stop.abort();
    const lock = this.#muster?.has('lock')
      ? (this.#muster.lock as unknown as Partial<Record<typeof simulateCrash, () => void>>)
      : undefined;
    lock?.[simulateCrash]?.();
    this.#link.event({ kind: 'exited', at: realNow(), who: this.spec.who });
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#running;
    await this.#muster?.close().catch(() => undefined);
  }

  async #contend(muster: Muster): Promise<void> {
    const { who, lockName, ttl } = this.spec;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      this.#link.event({ kind: 'acquiring', at: realNow(), who });
      let lease: Lease;
      try {
        lease = await muster.lock.acquire(lockName, { ttl, signal });
      } catch (error) {
        if (signal.aborted) return;
        this.#link.log(`acquire failed: ${describe(error)}`);
        await sleep(ttl / 4, signal).catch(() => undefined);
        continue;
      }
      if (signal.aborted) return; // crashed while the answer was on its way: keep the lease, as a dead process would
      const token = lease.token.toString();
      this.#link.event({ kind: 'acquired', at: realNow(), who, token, remainingMs: lease.expiresAt - this.clock.now() });
      let releasing = false;
      lease.onLost.addEventListener('abort', () => {
        if (releasing || signal.aborted) return;
        this.#link.event({ kind: 'lost', at: realNow(), who, token, reason: describe(lease.onLost.reason) });
      });
      const holdUntil = realNow() + this.#random.between(ttl / 2, ttl * 3);
      while (!lease.onLost.aborted && !signal.aborted && realNow() < holdUntil) {
        const accepted = await this.#link.write({ at: realNow(), who, token, holderNow: this.clock.now(), expiresAt: lease.expiresAt });
        if (!accepted) break; // fenced off: a newer holder exists, so this one stops and gives up
        await sleep(Math.max(20, ttl / 15), signal).catch(() => undefined);
      }
      if (signal.aborted) return;
      if (!lease.onLost.aborted) {
        releasing = true;
        await lease.release().then(
          () => this.#link.event({ kind: 'released', at: realNow(), who, token }),
          (error: unknown) => this.#link.log(`release failed: ${describe(error)}`),
        );
      }
      await sleep(this.#random.between(0, ttl / 2), signal).catch(() => undefined);
    }
  }

  async #beat(muster: Muster): Promise<void> {
    if (!muster.has('heartbeat')) return;
    const { member, generation, heartbeatTtl, group } = this.spec;
    const signal = this.#stop.signal;
    const payload: BeatPayload = { generation, pid: process.pid };
    while (!signal.aborted) {
      try {
        await muster.heartbeat.beat(member, payload, { ttl: heartbeatTtl, group, signal });
      } catch (error) {
        if (signal.aborted) return;
        // Superseded is the store doing its job for a zombie; the observer's view is what is judged.
        if (!MusterError.is(error, 'MUSTER_SUPERSEDED')) this.#link.log(`beat failed: ${describe(error)}`);
      }
      await sleep(heartbeatTtl / 3, signal).catch(() => undefined);
    }
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
