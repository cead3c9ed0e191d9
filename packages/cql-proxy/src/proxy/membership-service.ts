import type { Discovery, Endpoint, HeartbeatStore, MemberHeartbeat } from '@muster/core';
import { backoffDelay, sleep } from '@muster/core/adapter';
import type { ProxyConfig } from '../config.js';
import type { Event } from '../protocol/event.js';
import type { MembershipOptions, SelfIdentity } from '../virtual/membership.js';
import { MembershipTracker } from '../virtual/tracker.js';
import type { VirtualView } from '../virtual/view.js';
import { PeerLiveness } from './peer-liveness.js';
import { PeerProbe, type PeerProbeOptions } from './peer-probe.js';

export interface MembershipServiceOptions {
  readonly config: ProxyConfig;
  readonly discovery: Discovery;
  readonly heartbeat: HeartbeatStore | undefined;
  readonly self: () => SelfIdentity;
  readonly membership: MembershipOptions;
  /**
   * Data centers the backend has. A Discovery dc hint outside them (Consul's datacenter, say) is
   * not a Cassandra DC: it is dropped, so the member shows the default (the backend's local DC) and
   * drivers' replication checks see a DC they know.
   */
  readonly dataCenters: () => readonly string[];
  /** Runtime facts beaten into this instance's heartbeat payload. */
  readonly payload: () => Record<string, string | number | boolean>;
  /** Called once `view` already answers with the new view: tables first, then these events. */
  readonly onChange: (view: VirtualView, events: readonly Event[]) => void;
  readonly onError: (error: unknown) => void;
  /**
   * Probe the peers (static members without a HeartbeatStore that spans processes): how, and the
   * listener's TLS. Undefined: peers' liveness comes from the HeartbeatStore alone.
   */
  readonly probe?: Omit<PeerProbeOptions, 'onChange'>;
  /**
   * Discovery's list is the membership itself (static members): an instance it no longer lists
   * has been removed and must stop taking clients. Elsewhere (Kubernetes, Consul) the platform
   * lists an instance on its own schedule, so its absence says nothing.
   */
  readonly listingIsMembership?: boolean;
}

/**
 * Keeps the virtual cluster's member list current. Discovery and the HeartbeatStore feed a
 * MembershipTracker, which debounces flaps of either (a member that blinks within the window sends
 * nothing), takes stale heartbeats as DOWN even while Discovery lists the member, and diffs against
 * what clients were last told. This instance beats its own heartbeat, and everything is re-listed
 * periodically so a missed watch event heals.
 */
export class MembershipService {
  readonly #options: MembershipServiceOptions;
  readonly #stop = new AbortController();
  readonly #tracker: MembershipTracker;
  #timers: NodeJS.Timeout[] = [];
  #loops: Promise<void>[] = [];
  #leaving = false;
  readonly #probe: PeerProbe | undefined;
  readonly #liveness: PeerLiveness;
  /** Discovery's and the store's last word, before {@link PeerLiveness} shapes them. */
  #endpoints: readonly Endpoint[] | undefined;
  #heartbeats = new Map<string, MemberHeartbeat>();
  #removalTimer: NodeJS.Timeout | undefined;
  #everListed = false;

  constructor(options: MembershipServiceOptions) {
    this.#options = options;
    this.#probe = options.probe ? new PeerProbe({ ...options.probe, onChange: () => this.#shape() }) : undefined;
    // The DOWN (held for the debounce) goes out well before the removal: drivers that act on DOWN
    // (Java, gocql, which batches events for about 1 s) stop routing and let their requests finish
    // before the removal closes their pool.
    this.#liveness = new PeerLiveness({ removeAfter: options.config.events.debounce * 2 + 1500 });
    this.#tracker = new MembershipTracker({
      self: options.self(),
      membership: options.membership,
      flapWindow: options.config.events.debounce,
      maxDelay: options.config.events.maxDelay,
      onUpdate: ({ view, events }) =>
        options.onChange(
          view,
          events.map(({ type, change, address }) => ({ type, change, address })),
        ),
    });
  }

  /** What the system tables show now. */
  get view(): VirtualView | undefined {
    return this.#tracker.view;
  }

  /** Whether Discovery lists this instance (a static member removed from the file is not). */
  get selfListed(): boolean {
    if (this.#options.listingIsMembership !== true || this.#endpoints === undefined) return true;
    if (this.#endpoints.some((e) => e.id === this.#options.config.instanceId)) return true;
    // An empty list for a service this instance was never listed in is a lone instance (or a
    // service name the static list does not carry): it keeps serving, as it always did.
    return this.#endpoints.length === 0 && !this.#everListed;
  }

  /** Lists both sources once (so the first view is complete), then keeps watching. */
  async start(): Promise<void> {
    const { config, heartbeat } = this.#options;
    await this.beat();
    if (this.#probe) {
      // Probed before the first view goes out, so it shows who answers instead of flapping after.
      this.#setEndpoints(await this.#options.discovery.list(config.service, { signal: this.#stop.signal }));
      await this.#probe.start();
    }
    await this.#reconcile();
    this.#tracker.flush();
    this.#loops.push(this.#keepWatching(() => this.#watchDiscovery()));
    if (heartbeat) this.#loops.push(this.#keepWatching(() => this.#watchHeartbeats(heartbeat)));
    this.#every(config.heartbeat.interval, () => this.beat());
    this.#every(config.events.reconcile, () => this.#reconcile());
  }

  get #group(): string {
    return this.#options.config.heartbeat.group ?? this.#options.config.service;
  }

  #every(ms: number, task: () => Promise<void>): void {
    const timer = setInterval(() => {
      task().catch((error: unknown) => {
        if (!this.#stop.signal.aborted) this.#options.onError(error);
      });
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

  #placed(endpoints: readonly Endpoint[]): Endpoint[] {
    const known = this.#options.dataCenters();
    return endpoints.map((e) => {
      if (e.dc === undefined || known.includes(e.dc)) return e;
      const { dc: _foreign, ...rest } = e;
      return rest;
    });
  }

  #peers(): Endpoint[] {
    return (this.#endpoints ?? []).filter((e) => e.id !== this.#options.config.instanceId);
  }

  /** Discovery's endpoints, shaped by what the probe and the heartbeats say of each peer, to the tracker. */
  #shaped(): Endpoint[] | undefined {
    if (this.#endpoints === undefined) return undefined;
    const { endpoints, changesAt } = this.#liveness.apply(
      this.#endpoints,
      this.#options.config.instanceId,
      (id) => ({ probe: this.#probe?.state(id), heartbeat: this.#heartbeats.get(id) }),
      Date.now(),
    );
    clearTimeout(this.#removalTimer);
    if (changesAt !== undefined && !this.#stop.signal.aborted) {
      this.#removalTimer = setTimeout(() => this.#shape(), Math.max(0, changesAt - Date.now()));
      this.#removalTimer.unref();
    }
    return endpoints;
  }

  #shape(): void {
    const endpoints = this.#shaped();
    if (endpoints !== undefined && !this.#stop.signal.aborted) this.#tracker.setEndpoints(endpoints);
  }

  #setEndpoints(endpoints: readonly Endpoint[]): void {
    this.#endpoints = this.#placed(endpoints);
    if (this.#endpoints.some((e) => e.id === this.#options.config.instanceId)) this.#everListed = true;
    this.#probe?.setPeers(this.#peers());
  }

  #setHeartbeats(heartbeats: readonly MemberHeartbeat[]): void {
    this.#heartbeats = new Map(heartbeats.map((hb) => [hb.memberId, hb]));
  }

  /** Self's state changed (draining): re-derive now. */
  selfChanged(): void {
    this.#tracker.setSelf(this.#options.self());
    this.#tracker.flush();
  }

  /**
   * Runs a watch again when it ends: a watch fails for good on an error retrying cannot fix before
   * its first view (an RBAC rule or an ACL token not in place yet), which an operator then fixes
   * while this process runs. Each failure is reported; the periodic reconcile bridges the gap.
   */
  async #keepWatching(watch: () => Promise<void>): Promise<void> {
    for (let attempt = 0; !this.#stop.signal.aborted; attempt++) {
      await watch();
      await sleep(backoffDelay(attempt, 1000, 30_000), this.#stop.signal).catch(() => undefined);
    }
  }

  async #watchDiscovery(): Promise<void> {
    const { config, discovery } = this.#options;
    try {
      for await (const event of discovery.watch(config.service, { signal: this.#stop.signal })) {
        if (event.type === 'degraded') this.#options.onError(event.error);
        this.#setEndpoints(event.endpoints);
        this.#shape();
      }
    } catch (error) {
      if (!this.#stop.signal.aborted) this.#options.onError(error);
    }
  }

  async #watchHeartbeats(store: HeartbeatStore): Promise<void> {
    try {
      for await (const event of store.watch(this.#group, { signal: this.#stop.signal })) {
        if (event.type === 'degraded') this.#options.onError(event.error);
        this.#setHeartbeats(event.members);
        this.#shape(); // a peer's heartbeat may say it is draining
        this.#tracker.setHeartbeats(event.members);
      }
    } catch (error) {
      if (!this.#stop.signal.aborted) this.#options.onError(error);
    }
  }

  async #reconcile(): Promise<void> {
    const { config, discovery, heartbeat } = this.#options;
    const [endpoints, heartbeats] = await Promise.all([
      discovery.list(config.service, { signal: this.#stop.signal }),
      heartbeat ? heartbeat.list(this.#group, { signal: this.#stop.signal }) : Promise.resolve([]),
    ]);
    this.#setEndpoints(endpoints);
    if (heartbeat) this.#setHeartbeats(heartbeats);
    this.#tracker.reconcile({ endpoints: this.#shaped()!, heartbeats });
  }

  /** Beats now, so peers read `draining: true` in the payload at once (they then remove this instance). */
  async announceDraining(): Promise<void> {
    await this.beat();
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
    clearTimeout(this.#removalTimer);
    await this.#probe?.close();
    for (const timer of this.#timers) clearInterval(timer);
    this.#tracker.close();
    await Promise.allSettled(this.#loops);
  }
}
