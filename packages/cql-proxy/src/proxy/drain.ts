import { systemClock, type Clock } from '@muster/core';
import type { Event } from '../protocol/event.js';
import { closedEarlyOnDrain } from './departure.js';

/** What the drain needs of a client connection. */
export interface DrainableClient {
  /** Requests this client sent that have no answer yet. */
  readonly inFlight: number;
  /** Tells the client an event, if it REGISTERed for its type (a driver's control connection). */
  pushEvent(event: Event): boolean;
  /** The DRIVER_NAME of its STARTUP, if it named one. */
  readonly driverName?: string | undefined;
  /** Half-closes (FIN, never RST) once every request it sent has its answer. */
  endWhenAnswered(): void;
  /** The event types it REGISTERed for (a driver's control connection registers). */
  readonly registered: ReadonlySet<string>;
  /** Closes now, whatever is in flight. */
  close(): void;
}

export interface DrainOptions {
  /** ms drivers get to leave on their own once peers announce this instance leaving. */
  readonly grace: number;
  /** ms after which whatever is still open is closed, in flight or not. */
  readonly timeout: number;
  /**
   * ms the drain lasts at least (within the grace), even once every client has gone, when it
   * started with any: see {@link drainLinger}. Default 0.
   */
  readonly linger?: number;
  /** Told at once to the clients registered for them: this instance's own leaving (leaving.ts). */
  readonly farewell?: readonly Event[];
  readonly signal?: AbortSignal;
  /** Judges the grace and the timeout (default: core's monotonic systemClock). */
  readonly clock?: Clock;
}

export interface DrainReport {
  /** Connections the drivers closed themselves. */
  readonly left: number;
  /** Connections of drivers that cannot leave by themselves, half-closed early at an idle moment (departure.ts). */
  readonly early: number;
  /** Connections this instance half-closed after their last answer. */
  readonly ended: number;
  /** Connections cut at the timeout. */
  readonly cut: number;
}

/**
 * Empties an instance's client connections without losing a request, once the instance shows
 * itself draining (peers then announce it DOWN and remove it, see PeerLiveness).
 *
 * 0. Connections of drivers that cannot leave a host without losing what is in flight there
 *    (gocql, departure.ts) are half-closed at once, each at its first idle moment, so that their
 *    pools here are empty before a DOWN makes those drivers close them. Their control connections
 *    go last: while one is here, that driver hears no peer's DOWN about this instance.
 * 1. The farewell goes to this instance's registered clients (drivers' control connections): they
 *    re-read the topology here and move away by themselves (leaving.ts). Nothing is closed from
 *    this side yet: a driver that sends requests on its control connection (cassandra-driver
 *    does) would lose those it writes while a FIN is on its way.
 * 2. For `grace`, every connection keeps being served: drivers that hear the removal, or read the
 *    leaving data center, close their pools to this instance themselves once their requests are
 *    answered, with nothing lost.
 * 3. Then each remaining connection is half-closed once every request it sent has its answer.
 * 4. At `timeout`, whatever is left is closed.
 * New requests are served throughout: a draining proxy never answers OVERLOADED, which drivers
 * do not retry for non-idempotent statements.
 */
export async function drainClients(clients: ReadonlySet<DrainableClient>, options: DrainOptions): Promise<DrainReport> {
  const clock = options.clock ?? systemClock;
  const initial = new Set(clients);
  const start = clock.now();
  const early = [...clients].filter((client) => closedEarlyOnDrain(client.driverName));
  const earlyPools = early.filter((client) => client.registered.size === 0);
  for (const client of earlyPools) client.endWhenAnswered();
  for (const client of clients) for (const event of options.farewell ?? []) client.pushEvent(event);
  const poolsGone = () => earlyPools.every((client) => !clients.has(client));
  await waitUntil(poolsGone, start + options.grace, clock, options.signal);
  for (const client of early) if (client.registered.size > 0) client.endWhenAnswered();
  // With no client at all there is no driver to hear anything (a test's teardown, say).
  const linger = initial.size > 0 ? Math.min(options.linger ?? 0, options.grace) : 0;
  const lingered = () => clock.now() >= start + linger;
  await waitUntil(() => clients.size === 0 && lingered(), start + options.grace, clock, options.signal);
  const ended = new Set([...clients].filter((client) => !early.includes(client)));
  for (const client of ended) client.endWhenAnswered();
  await waitUntil(() => clients.size === 0, start + Math.max(options.grace, options.timeout), clock, options.signal);
  const cut = [...clients];
  for (const client of cut) client.close();
  // Every client is in exactly one of early, ended or left; any of them may have been cut.
  const notCut = (c: DrainableClient) => !cut.includes(c);
  return {
    left: [...initial].filter((c) => !early.includes(c) && !ended.has(c) && notCut(c)).length,
    early: early.filter(notCut).length,
    ended: [...ended].filter(notCut).length,
    cut: cut.length,
  };
}

async function waitUntil(done: () => boolean, deadline: number, clock: Clock, signal: AbortSignal | undefined): Promise<void> {
  while (!done() && clock.now() < deadline && !signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - clock.now()))));
  }
}

/**
 * How long a drain lasts at least while peers are up: until drivers have heard the peers remove
 * this instance (their notice, a probe interval and a debounce; the removal, `2 × debounce + 1.5
 * s` later, as PeerLiveness does; a debounce to send it) and refreshed their topology (about 2 s,
 * cassandra-driver's). A drain whose clients all leave at once (gocql's closed early) would
 * otherwise let a restart bring the instance back within that time, and a driver that hears
 * REMOVED_NODE and NEW_NODE in one refresh may never reconnect to it.
 */
export function drainLinger(config: {
  readonly peerProbe: { readonly interval: number };
  readonly events: { readonly debounce: number };
}): number {
  return config.peerProbe.interval + 4 * config.events.debounce + 1500 + 2000;
}
