/** A node of the real cluster as the ring sees it. */
export interface RingNode {
  readonly host: string;
  readonly port: number;
  readonly dataCenter: string;
  readonly rack: string;
  readonly tokens: readonly bigint[];
}

/**
 * The backend's token ring: every token of every node, sorted. A partition belongs to the node
 * owning the first token at or after the partition's token, wrapping past the largest.
 */
export class TokenRing {
  readonly nodes: readonly RingNode[];
  /** Ring positions in token order. */
  readonly #tokens: bigint[];
  /** Index into `nodes` of the node at each position. */
  readonly #owners: number[];

  constructor(nodes: readonly RingNode[]) {
    this.nodes = nodes;
    const entries: { token: bigint; owner: number }[] = [];
    nodes.forEach((node, owner) => {
      for (const token of node.tokens) entries.push({ token, owner });
    });
    entries.sort((a, b) => (a.token < b.token ? -1 : a.token > b.token ? 1 : 0));
    this.#tokens = entries.map((e) => e.token);
    this.#owners = entries.map((e) => e.owner);
  }

  /** Positions on the ring (tokens of all nodes). */
  get size(): number {
    return this.#tokens.length;
  }

  /** The ring position that owns `token`. Only meaningful when the ring is not empty. */
  positionOf(token: bigint): number {
    let low = 0;
    let high = this.#tokens.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#tokens[mid]! < token) low = mid + 1;
      else high = mid;
    }
    return low === this.#tokens.length ? 0 : low;
  }

  /** The node at ring position `position`, as an index into `nodes`. */
  ownerAt(position: number): number {
    return this.#owners[position % this.#owners.length]!;
  }
}
