import { systemClock, type Clock, type Discovery, type Endpoint } from '@muster/core';
import {
  createDiscovery,
  type DiscoveryBackend,
  type DiscoveryBackoff,
  type DiscoveryCallOptions,
  type DiscoveryView,
} from '@muster/core/adapter';
import { endpointSlices, isGone, type KubeClient } from './client.js';
import {
  mergeCandidates,
  missingPortError,
  portsWithoutSelected,
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
  readonly clock?: Clock;
}

/**
 * Discovery from a Service's EndpointSlices (label `kubernetes.io/service-name`), as a backend for
 * core's createDiscovery (which owns degraded / recovered, the diff and the backoff).
 *
 * `list()` is one LIST call and leaves nothing running, for serverless use. `views()` owns its
 * list-then-watch loop rather than using client-node's informer (which stops for good on most
 * errors and asks for no bookmarks): it watches from the list's resourceVersion with bookmarks,
 * relists at once on 410 Gone, relists every `resync` to heal anything a watch missed, and throws
 * on any other failure, so core backs off and starts it again with a relist.
 *
 * No registration: on Kubernetes the endpoints are the pods the Service selects, published by the
 * EndpointSlice controller from their readiness probes; the port's register() is a no-op. To leave
 * rotation, fail the readiness probe (or terminate); Muster does not write EndpointSlices.
 */
export class EndpointSliceBackend implements DiscoveryBackend {
  readonly name = 'kubernetes';
  readonly #client: KubeClient;
  readonly #selection: SliceSelection;
  readonly #resync: number;
  readonly #watchTimeout: number;
  readonly #podName: string | undefined;
  readonly #clock: Clock;
  #self: Endpoint | undefined;

  constructor(options: EndpointSliceDiscoveryOptions) {
    this.#client = options.client;
    this.#selection = { port: options.port };
    this.#resync = options.resync ?? 300_000;
    this.#watchTimeout = options.watchTimeoutSeconds ?? 300;
    this.#podName = options.podName || undefined;
    this.#clock = options.clock ?? systemClock;
  }

  /** This pod's endpoint, as last seen in a list or watch of any service. */
  get self(): Endpoint | undefined {
    return this.#self;
  }

  #selector(service: string): string {
    return `${serviceNameLabel}=${service}`;
  }

  #noteSelf(find: (id: string) => Endpoint | undefined): void {
    if (!this.#podName) return;
    const mine = find(this.#podName);
    if (mine) this.#self = mine;
  }

  async list(service: string, { signal }: DiscoveryCallOptions): Promise<Endpoint[]> {
    const { items } = await this.#client.list<EndpointSliceObject>(endpointSlices, { labelSelector: this.#selector(service), signal });
    const endpoints = mergeCandidates(items.map((slice) => sliceCandidates(slice, this.#selection)));
    this.#noteSelf((pod) => endpoints.find((e) => e.id === pod || e.metadata.pod === pod));
    const lacking = items.map((slice) => portsWithoutSelected(slice, this.#selection)).filter((p) => p !== undefined);
    if (endpoints.length === 0 && lacking.length > 0) throw missingPortError(service, this.#selection.port!, lacking);
    return endpoints;
  }

  async *views(service: string, { signal }: DiscoveryCallOptions): AsyncGenerator<DiscoveryView> {
    const labelSelector = this.#selector(service);
    // Slice by slice, so one watch event costs the size of its slice (see ServiceEndpoints).
    const state = new ServiceEndpoints();
    /** Slices with endpoints but without the named port, with the ports they have. */
    const lacking = new Map<string, string[]>();
    const note = (name: string, slice: EndpointSliceObject | undefined) => {
      const ports = slice && portsWithoutSelected(slice, this.#selection);
      if (ports) lacking.set(name, ports);
      else lacking.delete(name);
      return slice && sliceCandidates(slice, this.#selection);
    };
    // Core diffs the views, so ServiceEndpoints' own events are not needed: a relist (thousands of
    // changes) is applied silently, in one sort; a watch event incrementally, in one array copy per change.
    const apply = (changes: Iterable<readonly [string, readonly Candidate[] | undefined]>, relist = false): DiscoveryView => {
      state.update(changes, { silent: relist });
      this.#noteSelf((pod) => state.get(pod));
      // Endpoints exist, only not on the named port: an error (degraded, or the first view failing), never an empty view.
      if (state.endpoints.length === 0 && lacking.size > 0)
        return { error: missingPortError(service, this.#selection.port!, lacking.values()) };
      return state.endpoints;
    };
    while (!signal.aborted) {
      const list = await this.#client.list<EndpointSliceObject>(endpointSlices, { labelSelector, signal });
      // A relist is one change: slices gone since, and every listed slice as it is now.
      const listed = new Map<string, readonly Candidate[] | undefined>();
      for (const name of state.sliceNames) listed.set(name, undefined);
      lacking.clear();
      for (const slice of list.items) listed.set(slice.metadata?.name ?? '', note(slice.metadata?.name ?? '', slice));
      yield apply(listed, true);
      let resourceVersion = list.resourceVersion;
      const resyncAt = this.#clock.now() + this.#resync;
      try {
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
            yield apply([[name, note(name, event.type === 'DELETED' ? undefined : event.object)]]);
          }
        }
      } catch (error) {
        // Our resourceVersion was compacted away: expected now and then, relist at once.
        if (!isGone(error)) throw error;
      }
    }
  }

  close(): Promise<void> {
    this.#client.close();
    return Promise.resolve();
  }
}

/** The Discovery port on EndpointSlices; `backoff` is injectable so tests run it without real time. */
export function endpointSliceDiscovery(options: EndpointSliceDiscoveryOptions & { backoff?: Partial<DiscoveryBackoff> }): Discovery {
  return createDiscovery(new EndpointSliceBackend(options), options.backoff ? { backoff: options.backoff } : {});
}
