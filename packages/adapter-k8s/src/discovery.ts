import {
  BackendError,
  ClosedError,
  MusterError,
  systemClock,
  type Clock,
  type Discovery,
  type DiscoveryEvent,
  type Endpoint,
  type WaitOptions,
} from '@muster/core';
import { anySignal, backoffDelay, EventChannel, isTransient, sleep } from '@muster/core/adapter';
import { endpointSlices, isGone, type KubeClient } from './client.js';
import {
  mergeCandidates,
  serviceNameLabel,
  sliceCandidates,
  type Candidate,
  type EndpointSliceObject,
  type SliceSelection,
} from './endpoint-slices.js';
import { ServiceEndpoints } from './service-endpoints.js';

export interface EndpointSliceDiscoveryOptions {
  readonly client: KubeClient;
  /** Named port to report as each endpoint's `port`. */
  readonly port?: string | undefined;
  /** Relist this often even when the watch is healthy, and emit what differs (ms; default 5 min). */
  readonly resync?: number;
  /** Longest single watch request before we re-watch from the last resourceVersion (s; default 5 min). */
  readonly watchTimeoutSeconds?: number;
  /** This pod's name (POD_NAME from the downward API); `self` is its endpoint once seen. */
  readonly podName?: string | undefined;
  /** Waits between retries; injectable so tests can run the backoff without real time. */
  readonly delay?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Backoff after a failure: full jitter from `initialMs`, doubling up to `maxMs` (default 0.8 s → 30 s). */
  readonly backoff?: { readonly initialMs?: number; readonly maxMs?: number; readonly random?: () => number };
  readonly clock?: Clock;
}

/**
 * Discovery from a Service's EndpointSlices (label `kubernetes.io/service-name`).
 *
 * `list()` is one LIST call and leaves nothing running, for serverless use. `watch()` owns its
 * list-then-watch loop rather than using client-node's informer (which stops for good on most
 * errors and asks for no bookmarks): it watches from the list's resourceVersion with bookmarks,
 * relists at once on 410 Gone, relists with jittered backoff after any other failure (reporting
 * `degraded` with the last known endpoints, then `recovered` and the diff), and relists every
 * `resync` to heal anything a watch missed.
 *
 * `register()` and `deregister()` are no-ops: on Kubernetes the endpoints are the pods the
 * Service selects, published by the EndpointSlice controller from their readiness probes. To
 * leave rotation, fail the readiness probe (or terminate); Muster does not write EndpointSlices.
 */
export class EndpointSliceDiscovery implements Discovery {
  readonly #client: KubeClient;
  readonly #selection: SliceSelection;
  readonly #resync: number;
  readonly #watchTimeout: number;
  readonly #podName: string | undefined;
  readonly #delay: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #backoff: { initialMs: number; maxMs: number; random: () => number };
  readonly #clock: Clock;
  readonly #closing = new AbortController();
  readonly #running = new Set<Promise<void>>();
  #self: Endpoint | undefined;

  constructor(options: EndpointSliceDiscoveryOptions) {
    this.#client = options.client;
    this.#selection = { port: options.port };
    this.#resync = options.resync ?? 300_000;
    this.#watchTimeout = options.watchTimeoutSeconds ?? 300;
    this.#podName = options.podName || undefined;
    this.#delay = options.delay ?? ((ms, signal) => sleep(ms, signal));
    this.#backoff = {
      initialMs: options.backoff?.initialMs ?? 800,
      maxMs: options.backoff?.maxMs ?? 30_000,
      random: options.backoff?.random ?? Math.random,
    };
    this.#clock = options.clock ?? systemClock;
  }

  /** This pod's endpoint, as last seen in a list or watch of any service. */
  get self(): Endpoint | undefined {
    return this.#self;
  }

  #signal(options?: WaitOptions): AbortSignal {
    if (this.#closing.signal.aborted) throw new ClosedError('kubernetes discovery');
    return anySignal(options?.signal, this.#closing.signal);
  }

  #selector(service: string): string {
    return `${serviceNameLabel}=${service}`;
  }

  #noteSelf(endpoints: readonly Endpoint[]): void {
    if (!this.#podName) return;
    const mine = endpoints.find((e) => e.id === this.#podName || e.metadata.pod === this.#podName);
    if (mine) this.#self = mine;
  }

  async list(service: string, options?: WaitOptions): Promise<Endpoint[]> {
    const { items } = await this.#client.list<EndpointSliceObject>(endpointSlices, {
      labelSelector: this.#selector(service),
      signal: this.#signal(options),
    });
    const endpoints = mergeCandidates(items.map((slice) => sliceCandidates(slice, this.#selection)));
    this.#noteSelf(endpoints);
    return endpoints;
  }

  watch(service: string, options?: WaitOptions): AsyncIterable<DiscoveryEvent> {
    const stop = new AbortController();
    const signal = anySignal(this.#signal(options), stop.signal);
    const channel = new EventChannel<DiscoveryEvent>(() => stop.abort(), signal);
    const run = this.#run(service, signal, channel).finally(() => this.#running.delete(run));
    this.#running.add(run);
    return channel;
  }

  async #run(service: string, signal: AbortSignal, channel: EventChannel<DiscoveryEvent>): Promise<void> {
    const labelSelector = this.#selector(service);
    const state = new ServiceEndpoints();
    let started = false;
    let degraded = false;
    let attempt = 0;
    /** Applies slice changes as one change; the first application is the snapshot. */
    const publish = (changes: Iterable<readonly [string, readonly Candidate[] | undefined]>) => {
      if (!started) {
        started = true;
        state.update(changes, { silent: true });
        channel.push({ type: 'snapshot', endpoints: state.endpoints });
      } else {
        for (const event of state.update(changes)) channel.push(event);
      }
      const mine = this.#podName && state.get(this.#podName);
      if (mine) this.#self = mine;
    };

    while (!signal.aborted) {
      try {
        const list = await this.#client.list<EndpointSliceObject>(endpointSlices, { labelSelector, signal });
        // A relist is one change: slices gone since, and every listed slice as it is now.
        const listed = new Map<string, readonly Candidate[] | undefined>();
        for (const name of state.sliceNames) listed.set(name, undefined);
        for (const slice of list.items) listed.set(slice.metadata?.name ?? '', sliceCandidates(slice, this.#selection));
        if (degraded) {
          degraded = false;
          channel.push({ type: 'recovered', endpoints: state.endpoints });
        }
        publish(listed);
        attempt = 0;
        let resourceVersion = list.resourceVersion;
        const resyncAt = this.#clock.now() + this.#resync;
        for (let left = this.#resync; left > 0 && !signal.aborted; left = resyncAt - this.#clock.now()) {
          const timeoutSeconds = Math.max(1, Math.min(this.#watchTimeout, Math.ceil(left / 1000)));
          for await (const event of this.#client.watch<EndpointSliceObject>(endpointSlices, {
            labelSelector,
            resourceVersion,
            timeoutSeconds,
            signal,
          })) {
            resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
            if (event.type === 'BOOKMARK') continue;
            const name = event.object.metadata?.name ?? '';
            publish([[name, event.type === 'DELETED' ? undefined : sliceCandidates(event.object, this.#selection)]]);
          }
        }
      } catch (error) {
        if (signal.aborted) break;
        // Our resourceVersion was compacted away: expected now and then, relist at once.
        if (isGone(error)) continue;
        if (!started && !isTransient(error)) {
          // Wrong credentials, RBAC or namespace: say so instead of retrying in silence.
          channel.fail(error);
          return;
        }
        if (started && !degraded) {
          degraded = true;
          const err = MusterError.is(error) ? error : new BackendError('kubernetes', String(error), { cause: error });
          channel.push({ type: 'degraded', error: err, endpoints: state.endpoints });
        }
        const { initialMs, maxMs, random } = this.#backoff;
        await this.#delay(backoffDelay(attempt++, initialMs, maxMs, random), signal).catch(() => undefined);
      }
    }
    channel.end();
  }

  async register(): Promise<void> {
    // Pods are the endpoints: the EndpointSlice controller publishes them from readiness probes.
  }

  async deregister(): Promise<void> {}

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new ClosedError('kubernetes discovery'));
    await Promise.allSettled([...this.#running]);
    this.#client.close();
  }
}
