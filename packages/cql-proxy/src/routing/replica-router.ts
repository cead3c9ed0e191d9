import { murmur3Token } from './murmur3.js';
import { placeReplicas } from './replica-placement.js';
import type { Replication } from './replication.js';
import { routingKey } from './routing-key.js';
import { TokenRing, type RingNode } from './token-ring.js';

/** What routing needs to know of the real cluster; a new object whenever the backend view changes. */
export interface RoutingTopology {
  readonly ring: readonly RingNode[];
  /** Keyspaces whose strategy the proxy can place replicas for. */
  readonly replication: ReadonlyMap<string, Replication>;
  readonly localDataCenter: string;
}

interface Placement {
  readonly ring: TokenRing;
  /** Per keyspace, per ring position: the local-DC replicas in ring order (computed on first use). */
  readonly replicas: Map<string, Map<number, readonly RingNode[]>>;
  /** Per keyspace: the local-DC nodes that are replicas at every ring position (computed on first use). */
  readonly everywhere: Map<string, readonly RingNode[]>;
}

/**
 * Which node a routed request goes to: the first replica of its partition (ring order) in the
 * local data center that node health does not mark sick. Undefined sends it the ordinary way
 * (the client's own connection): keyspaces of other strategies, an empty ring, no healthy local
 * replica. Replicas in other data centers are never chosen: the proxy talks to the local DC only.
 */
export class ReplicaRouter {
  readonly #topology: () => RoutingTopology | undefined;
  readonly #isHealthy: (node: RingNode) => boolean;
  #source: RoutingTopology | undefined;
  #placement: Placement | undefined;

  constructor(topology: () => RoutingTopology | undefined, isHealthy: (node: RingNode) => boolean) {
    this.#topology = topology;
    this.#isHealthy = isHealthy;
  }

  /** The node to send a request for partition key `components` of `keyspace` to. */
  replicaFor(keyspace: string, components: readonly Buffer[]): RingNode | undefined {
    const placement = this.#current();
    if (!placement || placement.ring.size === 0) return undefined;
    const local = this.#localReplicas(placement, keyspace, components);
    if (!local) return undefined;
    for (const node of local) if (this.#isHealthy(node)) return node;
    return undefined;
  }

  /**
   * Whether `node` is healthy and a local-DC replica of every partition of `keyspace`: the one node
   * of a one-node data center, or any node when the replication factor covers them all. A request
   * for such a keyspace may then go to that node without its key being hashed at all.
   */
  holdsEveryPartition(keyspace: string, node: { readonly host: string; readonly port: number }): boolean {
    const placement = this.#current();
    if (!placement || placement.ring.size === 0) return false;
    let nodes = placement.everywhere.get(keyspace);
    if (!nodes) placement.everywhere.set(keyspace, (nodes = this.#everywhere(placement, keyspace)));
    for (const n of nodes) if (n.host === node.host && n.port === node.port) return this.#isHealthy(n);
    return false;
  }

  #everywhere(placement: Placement, keyspace: string): readonly RingNode[] {
    const replication = this.#source!.replication.get(keyspace);
    if (!replication) return [];
    const dc = this.#source!.localDataCenter;
    const { ring } = placement;
    let common = ring.nodes.map((_, i) => i).filter((i) => ring.nodes[i]!.dataCenter === dc);
    for (let position = 0; position < ring.size && common.length > 0; position++) {
      const replicas = placeReplicas(ring, replication, position);
      common = common.filter((i) => replicas.includes(i));
    }
    return common.map((i) => ring.nodes[i]!);
  }

  #localReplicas(placement: Placement, keyspace: string, components: readonly Buffer[]): readonly RingNode[] | undefined {
    const replication = this.#source!.replication.get(keyspace);
    if (!replication) return undefined;
    let key: Buffer;
    try {
      key = routingKey(components);
    } catch {
      return undefined; // a component longer than 64 KiB: Cassandra refuses it anyway
    }
    const position = placement.ring.positionOf(murmur3Token(key));
    let byPosition = placement.replicas.get(keyspace);
    if (!byPosition) placement.replicas.set(keyspace, (byPosition = new Map()));
    let local = byPosition.get(position);
    if (!local) {
      const { nodes } = placement.ring;
      const dc = this.#source!.localDataCenter;
      local = placeReplicas(placement.ring, replication, position)
        .map((i) => nodes[i]!)
        .filter((n) => n.dataCenter === dc);
      byPosition.set(position, local);
    }
    return local;
  }

  #current(): Placement | undefined {
    const source = this.#topology();
    if (source !== this.#source) {
      this.#source = source;
      this.#placement = source ? { ring: new TokenRing(source.ring), replicas: new Map(), everywhere: new Map() } : undefined;
    }
    return this.#placement;
  }
}
