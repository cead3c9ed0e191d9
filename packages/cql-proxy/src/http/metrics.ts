import { Counter, Gauge, Registry } from 'prom-client';
import { FastHistogram } from './histogram.js';

/** What the scrape-time gauges sum over: the open client connections. */
export interface ClientLoad {
  /** Requests forwarded and not answered yet. */
  readonly inFlight: number;
  /** Stream ids taken on the client's backend connection. */
  readonly backendStreamsInUse: number;
}

/** A count kept on the hot path, read by a metric's collect(). */
export class PlainCount {
  value = 0;

  inc(): void {
    this.value++;
  }
}

/**
 * The proxy's Prometheus metrics, on a registry of its own (no global state). Per-request state
 * (in flight, stream ids) is not counted twice on the hot path: it is summed over the clients
 * when scraped.
 */
export class ProxyMetrics {
  readonly registry = new Registry();
  readonly #clients: () => Iterable<ClientLoad>;
  readonly #nodes: () => Iterable<{ readonly node: string; readonly healthy: boolean }>;

  constructor(
    clients: () => Iterable<ClientLoad> = () => [],
    nodes: () => Iterable<{ readonly node: string; readonly healthy: boolean }> = () => [],
  ) {
    this.#clients = clients;
    this.#nodes = nodes;
  }

  #sum(of: (client: ClientLoad) => number): number {
    let total = 0;
    for (const client of this.#clients()) total += of(client);
    return total;
  }

  /** Set by the proxy: client sockets admitted and not closed yet, and how many are still handshaking. */
  sockets: () => { readonly open: number; readonly handshaking: number } = () => ({ open: 0, handshaking: 0 });
  readonly clientSockets: Gauge<'state'> = new Gauge({
    name: 'muster_proxy_client_sockets',
    help: 'Open client sockets (each counted until it has closed), by state: handshaking or established',
    labelNames: ['state'] as const,
    registers: [this.registry],
    collect: (): void => {
      const { open, handshaking } = this.sockets();
      this.clientSockets.set({ state: 'handshaking' }, handshaking);
      this.clientSockets.set({ state: 'established' }, open - handshaking);
    },
  });
  readonly clientConnections = new Gauge({
    name: 'muster_proxy_client_connections',
    help: 'Open client connections',
    registers: [this.registry],
  });
  readonly inFlight: Gauge = new Gauge({
    name: 'muster_proxy_in_flight_requests',
    help: 'Requests forwarded and not yet answered',
    registers: [this.registry],
    collect: (): void => this.inFlight.set(this.#sum((c) => c.inFlight)),
  });
  readonly requestDuration = new FastHistogram({
    name: 'muster_proxy_request_duration_seconds',
    help: 'Time from a client request to its response',
    label: 'kind',
    values: ['forwarded', 'system'],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly forwardedDuration = this.requestDuration.series('forwarded');
  readonly systemDuration = this.requestDuration.series('system');
  readonly backendStreamIds: Gauge = new Gauge({
    name: 'muster_proxy_backend_stream_ids_in_use',
    help: 'Stream ids taken on backend connections (of 32768 per connection)',
    registers: [this.registry],
    collect: (): void => this.backendStreamIds.set(this.#sum((c) => c.backendStreamsInUse)),
  });
  readonly errors = new Counter({
    name: 'muster_proxy_errors_total',
    help: 'Errors by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly backendConnections = new Gauge({
    name: 'muster_proxy_backend_connections',
    help: 'Open connections to backend nodes',
    labelNames: ['node'] as const,
    registers: [this.registry],
  });
  readonly backendNodeUp: Gauge<'node'> = new Gauge({
    name: 'muster_proxy_backend_node_up',
    help: 'Whether a backend node answers the proxy (1) or is avoided as sick (0)',
    labelNames: ['node'] as const,
    registers: [this.registry],
    collect: (): void => {
      this.backendNodeUp.reset();
      for (const { node, healthy } of this.#nodes()) this.backendNodeUp.set({ node }, healthy ? 1 : 0);
    },
  });
  readonly backendNodeTransitions = new Counter({
    name: 'muster_proxy_backend_node_transitions_total',
    help: 'Backend nodes turning sick or healthy again',
    labelNames: ['node', 'to'] as const,
    registers: [this.registry],
  });
  readonly schemaAgreementWaits = new Counter({
    name: 'muster_proxy_schema_agreement_waits_total',
    help: 'DDL answers held until the backend nodes agreed on the schema, by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  /**
   * Counted per request as plain numbers and handed to the counter when scraped: a prom-client
   * child bound with labels() still hashes its labels on every inc().
   */
  readonly routedToReplica = new PlainCount();
  readonly routedOrdinary = new PlainCount();
  readonly routedExecutes = new Counter({
    name: 'muster_proxy_routed_executes_total',
    help: 'Prepared EXECUTEs with routing.replicas on, by path: sent to a replica of their partition (or to the client node when it holds every partition of the keyspace), or the ordinary way (key not bound by position, keyspace strategy unknown, no healthy local replica, credentials that cannot be replayed)',
    labelNames: ['path'] as const,
    registers: [this.registry],
    collect: (): void => {
      this.routedExecutes.reset();
      this.routedExecutes.inc({ path: 'replica' }, this.routedToReplica.value);
      this.routedExecutes.inc({ path: 'ordinary' }, this.routedOrdinary.value);
    },
  });
  readonly preparedCache = new Gauge({
    name: 'muster_proxy_prepared_cache_entries',
    help: 'PREPARE frames kept for re-preparing',
    registers: [this.registry],
  });
  readonly membershipSize = new Gauge({
    name: 'muster_proxy_membership_size',
    help: 'Proxy instances in the virtual cluster',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  readonly membershipChanges = new Counter({
    name: 'muster_proxy_membership_changes_total',
    help: 'Membership changes seen',
    registers: [this.registry],
  });
  readonly eventsSent = new Counter({
    name: 'muster_proxy_events_sent_total',
    help: 'Events pushed to clients',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly eventsDropped = new Counter({
    name: 'muster_proxy_events_dropped_total',
    help: 'Events not delivered because a client was too slow',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly discoveryErrors = new Counter({
    name: 'muster_proxy_discovery_errors_total',
    help: 'Discovery or heartbeat backend failures',
    registers: [this.registry],
  });
}
