import { debounceDiscovery, type Discovery, type Endpoint, type HeartbeatStore, type MemberHeartbeat } from '@muster/core';
import type { ProxyConfig } from '../config.js';
import { deriveMembership, type Membership, type MembershipOptions, type SelfIdentity } from '../virtual/membership.js';
import { advanceView, type VirtualView } from '../virtual/view.js';

export interface MembershipServiceOptions {
  readonly config: ProxyConfig;
  readonly discovery: Discovery;
  readonly heartbeat: HeartbeatStore | undefined;
  readonly self: () => SelfIdentity;
  readonly membership: () => MembershipOptions;
  /** Runtime facts beaten into this instance's heartbeat payload. */
  readonly payload: () => Record<string, string | number | boolean>;
  /** Called after `view` already answers with `next`: tables first, then events. */
  readonly onChange: (previous: VirtualView | undefined, next: VirtualView) => void;
  readonly onError: (error: unknown) => void;
}

/**
 * Keeps the virtual cluster's member list current: watches Discovery (debounced, so flaps produce
 * nothing) and the HeartbeatStore (stale members go DOWN even while Discovery lists them), beats
 * this instance's own heartbeat, and re-derives everything periodically so a missed event heals.
 */
export class MembershipService {
  readonly #options: MembershipServiceOptions;
  readonly #stop = new AbortController();
  #endpoints: readonly Endpoint[] = [];
  #heartbeats: readonly MemberHeartbeat[] = [];
  #current: Membership | undefined;
  #view: VirtualView | undefined;
  #timers: NodeJS.Timeout[] = [];
  #leaving = false;
  #loops: Promise<void>[] = [];

  constructor(options: MembershipServiceOptions) {
    this.#options = options;
  }

  get current(): Membership | undefined {
    return this.#current;
  }

  /** What the system tables show now. */
  get view(): VirtualView | undefined {
    return this.#view;
  }

  /** Lists both sources once (so the first answer is complete), then keeps watching. */
  async start(): Promise<void> {
    const { config, discovery, heartbeat } = this.#options;
    await this.beat();
    [this.#endpoints, this.#heartbeats] = await Promise.all([
      discovery.list(config.service, { signal: this.#stop.signal }),
      heartbeat ? heartbeat.list(this.#group, { signal: this.#stop.signal }) : Promise.resolve([]),
    ]);
    this.recompute();
    this.#loops.push(this.#watchDiscovery());
    if (heartbeat) this.#loops.push(this.#watchHeartbeats(heartbeat));
    this.#every(config.heartbeat.interval, () => this.beat());
    this.#every(config.events.reconcile, () => this.#reconcile());
    // Liveness is judged on the local clock: re-derive often enough to notice a stale member.
    this.#every(Math.max(100, Math.min(config.heartbeat.ttl / 4, 1000)), async () => this.recompute());
  }

  get #group(): string {
    return this.#options.config.heartbeat.group ?? this.#options.config.service;
  }

  #every(ms: number, task: () => Promise<void>): void {
    const timer = setInterval(() => {
      task().catch((error: unknown) => this.#options.onError(error));
    }, ms);
    timer.unref();
    this.#timers.push(timer);
  }

  async beat(): Promise<void> {
    const { heartbeat, config } = this.#options;
    if (!heartbeat || this.#stop.signal.aborted || this.#leaving) return;
    await heartbeat.beat(config.instanceId, this.#options.payload(), {
      ttl: config.heartbeat.ttl,
      group: this.#group,
      signal: this.#stop.signal,
    });
  }

  async #watchDiscovery(): Promise<void> {
    const { config, discovery } = this.#options;
    const events = debounceDiscovery(discovery.watch(config.service, { signal: this.#stop.signal }), {
      quietPeriod: config.events.debounce,
      maxDelay: config.events.maxDelay,
    });
    try {
      for await (const event of events) {
        if (event.type === 'degraded') this.#options.onError(event.error);
        this.#endpoints = event.endpoints;
        this.recompute();
      }
    } catch (error) {
      if (!this.#stop.signal.aborted) this.#options.onError(error);
    }
  }

  async #watchHeartbeats(store: HeartbeatStore): Promise<void> {
    try {
      for await (const event of store.watch(this.#group, { signal: this.#stop.signal })) {
        if (event.type === 'degraded') this.#options.onError(event.error);
        this.#heartbeats = event.members;
        this.recompute();
      }
    } catch (error) {
      if (!this.#stop.signal.aborted) this.#options.onError(error);
    }
  }

  async #reconcile(): Promise<void> {
    const { config, discovery, heartbeat } = this.#options;
    const [endpoints, heartbeats] = await Promise.all([
      discovery.list(config.service, { signal: this.#stop.signal }),
      heartbeat ? heartbeat.list(this.#group, { signal: this.#stop.signal }) : Promise.resolve(this.#heartbeats),
    ]);
    this.#endpoints = endpoints;
    this.#heartbeats = heartbeats;
    this.recompute();
  }

  /** Derives the member list from what is known now and reports it if it changed. */
  recompute(): void {
    if (this.#stop.signal.aborted) return;
    const next = deriveMembership(
      { self: this.#options.self(), endpoints: this.#endpoints, heartbeats: this.#heartbeats, now: Date.now() },
      this.#options.membership(),
    );
    if (this.#current && sameMembers(this.#current, next)) return;
    this.#current = next;
    const previous = this.#view;
    this.#view = advanceView(previous, next);
    this.#options.onChange(previous, this.#view);
  }

  /**
   * Stops beating and deletes this instance's heartbeat, so peers report it DOWN at once instead
   * of after a ttl (graceful shutdown; a crash is still noticed through the ttl).
   */
  async leave(): Promise<void> {
    this.#leaving = true;
    const { heartbeat, config } = this.#options;
    await heartbeat?.remove(config.instanceId, { signal: this.#stop.signal });
  }

  async close(): Promise<void> {
    this.#stop.abort();
    for (const timer of this.#timers) clearInterval(timer);
    await Promise.allSettled(this.#loops);
  }
}

function sameMembers(a: Membership, b: Membership): boolean {
  if (a.members.length !== b.members.length) return false;
  return a.members.every((m, i) => {
    const o = b.members[i]!;
    return (
      m.id === o.id &&
      m.address === o.address &&
      m.nativePort === o.nativePort &&
      m.up === o.up &&
      m.dc === o.dc &&
      m.rack === o.rack &&
      m.hostId === o.hostId &&
      m.tokens.join() === o.tokens.join()
    );
  });
}
