import {
  BackendError,
  ClosedError,
  InvalidArgumentError,
  MusterError,
  type Discovery,
  type DiscoveryEvent,
  type Endpoint,
  type Registration,
  type WaitOptions,
} from '@muster/core';
import { anySignal, backoffDelay, byId, EndpointSet, EventChannel, isTransient, sleep, throwIfAborted } from '@muster/core/adapter';
import { blockingViews } from './blocking.js';
import type { ConsulClient, ConsulResponse } from './client.js';
import { toEndpoints, toServiceDefinition, type HealthEntry } from './health.js';

export interface ConsulDiscoveryOptions {
  /**
   * `all` (default): every instance, not-ready ones with `ready: false`, as the Discovery port
   * asks. `passing`: Consul filters (`?passing`), so only ready instances travel; smaller answers
   * for big services, but an instance going unready is reported as removed.
   */
  readonly health: 'all' | 'passing';
  /** Count `warning` checks as ready (Consul's `?passing` does not). */
  readonly readyOnWarning: boolean;
  /** Blocking-query wait (ms); every answer is a full view, so this is also the resync period. */
  readonly watchWait: number;
  /** Least time between two queries of one watch (ms). */
  readonly minWatchInterval: number;
  /** TTL of the check register() creates and keeps passing (ms). */
  readonly checkTtl: number;
  /** Consul removes a registration whose check stayed critical this long (ms; Consul's minimum is 1 min). */
  readonly deregisterCriticalAfter: number;
  /** Backoff between failed watch queries (ms), with full jitter; injectable for tests. */
  readonly retryDelay?: (attempt: number) => number;
}

interface Registered {
  readonly registration: Registration;
  readonly stop: AbortController;
  readonly keeper: Promise<void>;
}

/**
 * Discovery from Consul's health API, and self-registration with a TTL check.
 *
 * `list()` is one `/v1/health/service/<name>` call. `watch()` is a loop of blocking queries on the
 * same endpoint; each answer is a full view fed to an EndpointSet, so a missed change heals at the
 * next answer and a backend restart shows up as the difference. Failures are `degraded` events
 * that keep the last known endpoints; nothing is ever reported empty because Consul is down.
 */
export class ConsulDiscovery implements Discovery {
  readonly #client: ConsulClient;
  readonly #options: ConsulDiscoveryOptions;
  readonly #closing = new AbortController();
  readonly #watches = new Set<Promise<void>>();
  #registered: Registered | undefined;

  constructor(client: ConsulClient, options: ConsulDiscoveryOptions) {
    this.#client = client;
    this.#options = options;
  }

  get self(): Endpoint | undefined {
    const r = this.#registered?.registration;
    if (!r) return undefined;
    return {
      id: r.id,
      address: r.address,
      port: r.port,
      ...(r.ports ? { ports: r.ports } : {}),
      ready: true,
      metadata: { ...r.metadata, ...(r.tags?.length ? { tags: r.tags.join(',') } : {}) },
    };
  }

  #signal(options?: WaitOptions): AbortSignal {
    if (this.#closing.signal.aborted) throw new ClosedError('Consul discovery');
    return anySignal(options?.signal, this.#closing.signal);
  }

  #query(service: string, signal: AbortSignal, index?: bigint, wait?: number): Promise<ConsulResponse<HealthEntry[]>> {
    if (!service) throw new InvalidArgumentError('service name must not be empty');
    return this.#client.get<HealthEntry[]>(`/v1/health/service/${encodeURIComponent(service)}`, {
      query: { passing: this.#options.health === 'passing' },
      signal,
      ...(index !== undefined ? { index, wait: wait ?? this.#options.watchWait } : {}),
      purpose: `read the health of service '${service}'`,
      rule: `service "${service}" { policy = "read" } and node_prefix "" { policy = "read" }`,
    });
  }

  #endpoints(service: string, res: ConsulResponse<HealthEntry[]>): Endpoint[] {
    if (res.filteredByAcls) {
      // Consul dropped instances the token may not see: an answer with holes is worse than none.
      throw new BackendError(
        'consul',
        `read the health of service '${service}': Consul filtered the answer by ACLs; the token needs service "${service}" { policy = "read" } and node_prefix "" { policy = "read" }`,
        { status: 403 },
      );
    }
    return toEndpoints(res.body ?? [], { readyOnWarning: this.#options.readyOnWarning });
  }

  async list(service: string, options?: WaitOptions): Promise<Endpoint[]> {
    const signal = this.#signal(options);
    return this.#endpoints(service, await this.#query(service, signal)).sort(byId);
  }

  watch(service: string, options?: WaitOptions): AsyncIterable<DiscoveryEvent> {
    const stop = new AbortController();
    const signal = anySignal(this.#signal(options), stop.signal);
    const channel = new EventChannel<DiscoveryEvent>(() => stop.abort(), signal);
    const running = this.#run(service, signal, channel).finally(() => this.#watches.delete(running));
    this.#watches.add(running);
    return channel;
  }

  async #run(service: string, signal: AbortSignal, channel: EventChannel<DiscoveryEvent>): Promise<void> {
    const state = new EndpointSet();
    let started = false;
    let degraded = false;
    const delay = this.#options.retryDelay ?? ((attempt: number) => backoffDelay(attempt));
    for (let attempt = 0; !signal.aborted;) {
      try {
        const views = blockingViews((index, wait) => this.#query(service, signal, index, wait), {
          signal,
          wait: this.#options.watchWait,
          minInterval: this.#options.minWatchInterval,
        });
        for await (const res of views) {
          const endpoints = this.#endpoints(service, res);
          attempt = 0;
          if (!started) {
            started = true;
            state.replace(endpoints);
            channel.push({ type: 'snapshot', endpoints: state.endpoints });
            continue;
          }
          if (degraded) {
            degraded = false;
            channel.push({ type: 'recovered', endpoints: state.endpoints });
          }
          for (const event of state.replace(endpoints)) channel.push(event);
        }
      } catch (error) {
        if (signal.aborted) break;
        const err = MusterError.is(error) ? error : new BackendError('consul', String(error), { cause: error });
        if (!started && !isTransient(err)) {
          // A wrong token or datacenter will not fix itself: say so instead of waiting forever.
          channel.fail(err);
          return;
        }
        if (started && !degraded) {
          degraded = true;
          channel.push({ type: 'degraded', error: err, endpoints: state.endpoints });
        }
        await sleep(delay(attempt++), signal).catch(() => undefined);
      }
    }
    channel.end();
  }

  /**
   * Registers this process with the local agent, with a TTL check that a background keeper passes
   * every third of its TTL. When a pass finds the check unknown (the agent restarted and forgot
   * its services, or an operator deregistered it) the keeper registers again.
   */
  async register(self: Registration, options?: WaitOptions): Promise<void> {
    const signal = this.#signal(options);
    if (this.#registered && this.#registered.registration.id !== self.id) await this.deregister(options);
    else if (this.#registered) await this.#stopKeeper();
    await this.#registerWithAgent(self, signal);
    const stop = new AbortController();
    const keeper = this.#keep(self, anySignal(stop.signal, this.#closing.signal));
    this.#registered = { registration: self, stop, keeper };
  }

  async #registerWithAgent(self: Registration, signal: AbortSignal): Promise<void> {
    const definition = toServiceDefinition(self, {
      checkTtl: this.#options.checkTtl,
      deregisterCriticalAfter: this.#options.deregisterCriticalAfter,
    });
    await this.#client.put('/v1/agent/service/register', {
      query: { 'replace-existing-checks': true },
      body: definition,
      signal,
      local: true,
      purpose: `register service '${self.service}' (id ${self.id}) with the agent`,
      rule: `service "${self.service}" { policy = "write" }`,
    });
  }

  async #keep(self: Registration, signal: AbortSignal): Promise<void> {
    const checkId = `service:${self.id}`;
    const interval = Math.max(100, this.#options.checkTtl / 3);
    let failures = 0;
    while (!signal.aborted) {
      try {
        // A keeper timer must not hold an otherwise finished process open.
        await sleep(failures === 0 ? interval : Math.min(interval, backoffDelay(failures - 1, 200, interval)), signal, { unref: true });
        const res = await this.#client.put(`/v1/agent/check/pass/${encodeURIComponent(checkId)}`, {
          accept: [404, 500],
          signal,
          local: true,
          purpose: `pass TTL check ${checkId}`,
          rule: `service "${self.service}" { policy = "write" }`,
        });
        if (res.status === 404 || (res.status === 500 && /Unknown check|does not have associated TTL|not found/i.test(String(res.body)))) {
          await this.#registerWithAgent(self, signal);
        } else if (res.status === 500) {
          throw new BackendError('consul', `pass TTL check ${checkId}: HTTP 500: ${String(res.body).slice(0, 200)}`, { status: 500 });
        }
        failures = 0;
      } catch {
        // Agent down or restarting: try again sooner than the interval, the check's TTL is running.
        if (!signal.aborted) failures++;
      }
    }
  }

  async #stopKeeper(): Promise<void> {
    const r = this.#registered;
    if (!r) return;
    r.stop.abort();
    await r.keeper;
  }

  async deregister(options?: WaitOptions): Promise<void> {
    const r = this.#registered;
    if (!r) return;
    await this.#stopKeeper();
    this.#registered = undefined;
    throwIfAborted(options?.signal, 'deregister()');
    await this.#client.put(`/v1/agent/service/deregister/${encodeURIComponent(r.registration.id)}`, {
      accept: [404],
      signal: anySignal(options?.signal, AbortSignal.timeout(5000)),
      local: true,
      purpose: `deregister service id ${r.registration.id}`,
      rule: `service "${r.registration.service}" { policy = "write" }`,
    });
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new ClosedError('Consul discovery'));
    // Deregistering first means peers stop routing here before this process goes away.
    const deregistered = this.#registered ? this.deregister().catch(() => undefined) : Promise.resolve();
    await Promise.allSettled([deregistered, ...this.#watches]);
    this.#client.close();
  }
}
