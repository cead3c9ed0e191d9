import { BackendError, type Discovery, type Endpoint, type Registration } from '@muster/core';
import {
  createDiscovery,
  type DiscoveryBackend,
  type DiscoveryBackoff,
  type DiscoveryCallOptions,
  type RegistrationBackend,
} from '@muster/core/adapter';
import { blockingViews } from './blocking.js';
import { checkPathSegment, type ConsulClient, type ConsulResponse } from './client.js';
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
}

/**
 * Discovery from Consul's health API, and self-registration with a TTL check, as a backend for
 * core's createDiscovery (which owns degraded / recovered, the diff, the backoff and keeping the
 * registration alive).
 *
 * `list()` is one `/v1/health/service/<name>` call. `views()` is a loop of blocking queries on the
 * same endpoint; each answer is a full view, so a missed change heals at the next answer and a
 * backend restart shows up as the difference.
 */
export class ConsulDiscoveryBackend implements DiscoveryBackend {
  readonly name = 'consul';
  readonly #client: ConsulClient;
  readonly #options: ConsulDiscoveryOptions;
  #registered: Registration | undefined;
  /**
   * Registers this process with the local agent, with a TTL check that core's keeper passes every
   * third of its TTL. A pass that finds the check unknown (the agent restarted and forgot its
   * services, or an operator deregistered it) reports the registration forgotten, and core
   * registers again.
   */
  readonly registration: RegistrationBackend;

  constructor(client: ConsulClient, options: ConsulDiscoveryOptions) {
    this.#client = client;
    this.#options = options;
    this.registration = {
      renewInterval: Math.max(100, options.checkTtl / 3),
      register: (self, o) => this.#register(self, o),
      renew: (self, o) => this.#passCheck(self, o),
      deregister: (self, o) => this.#deregister(self, o),
    };
  }

  get self(): Endpoint | undefined {
    const r = this.#registered;
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

  #query(service: string, signal: AbortSignal, index?: bigint, wait?: number): Promise<ConsulResponse<HealthEntry[]>> {
    return this.#client.get<HealthEntry[]>(`/v1/health/service/${encodeURIComponent(checkPathSegment('service name', service))}`, {
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

  async list(service: string, { signal }: DiscoveryCallOptions): Promise<Endpoint[]> {
    return this.#endpoints(service, await this.#query(service, signal));
  }

  async *views(service: string, { signal }: DiscoveryCallOptions): AsyncGenerator<Endpoint[]> {
    const answers = blockingViews((index, wait) => this.#query(service, signal, index, wait), {
      signal,
      wait: this.#options.watchWait,
      minInterval: this.#options.minWatchInterval,
    });
    for await (const res of answers) yield this.#endpoints(service, res);
  }

  async #register(self: Registration, { signal }: DiscoveryCallOptions): Promise<void> {
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
    this.#registered = self;
  }

  async #passCheck(self: Registration, { signal }: DiscoveryCallOptions): Promise<boolean> {
    const checkId = `service:${self.id}`;
    const res = await this.#client.put(`/v1/agent/check/pass/${encodeURIComponent(checkId)}`, {
      accept: [404, 500],
      signal,
      local: true,
      purpose: `pass TTL check ${checkId}`,
      rule: `service "${self.service}" { policy = "write" }`,
    });
    if (res.status === 404 || (res.status === 500 && /Unknown check|does not have associated TTL|not found/i.test(String(res.body)))) {
      return false;
    }
    if (res.status === 500) {
      throw new BackendError('consul', `pass TTL check ${checkId}: HTTP 500: ${String(res.body).slice(0, 200)}`, { status: 500 });
    }
    return true;
  }

  async #deregister(self: Registration, { signal }: DiscoveryCallOptions): Promise<void> {
    this.#registered = undefined;
    await this.#client.put(`/v1/agent/service/deregister/${encodeURIComponent(self.id)}`, {
      accept: [404],
      signal,
      local: true,
      purpose: `deregister service id ${self.id}`,
      rule: `service "${self.service}" { policy = "write" }`,
    });
  }

  close(): Promise<void> {
    this.#client.close();
    return Promise.resolve();
  }
}

/** The Discovery port on Consul; `backoff` is injectable so tests run it without real time. */
export function consulDiscovery(
  client: ConsulClient,
  options: ConsulDiscoveryOptions & { backoff?: Partial<DiscoveryBackoff> },
): Discovery {
  return createDiscovery(new ConsulDiscoveryBackend(client, options), options.backoff ? { backoff: options.backoff } : {});
}
