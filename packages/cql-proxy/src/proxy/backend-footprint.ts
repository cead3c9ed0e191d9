import type { BackendView } from './backend-cluster.js';

/**
 * What identifies the backend's nodes in free text the backend writes for clients (warnings): their
 * addresses, host ids and ring tokens. The proxy shows its own instances as the cluster, so none of
 * these may reach a client.
 */
export interface BackendFootprint {
  /** Native-protocol addresses of every node of every DC, as the ring lists them. */
  readonly addresses: ReadonlySet<string>;
  /** Host ids of every node of every DC. */
  readonly hostIds: ReadonlySet<string>;
  /** Every node's ring tokens, as decimal strings. */
  readonly tokens: ReadonlySet<string>;
}

const derived = new WeakMap<BackendView, BackendFootprint>();

/** The footprint of `view`, derived once per view (a view is replaced, never changed, on a refresh). */
export function backendFootprint(view: BackendView): BackendFootprint {
  let footprint = derived.get(view);
  if (!footprint) {
    const addresses = new Set<string>();
    const tokens = new Set<string>();
    for (const node of view.routing.ring) {
      addresses.add(node.host);
      for (const token of node.tokens) tokens.add(token.toString());
    }
    const hostIds = new Set<string>();
    for (const node of view.allNodes) {
      if (node.host !== '') addresses.add(node.host);
      if (node.hostId) hostIds.add(node.hostId.toLowerCase());
    }
    footprint = { addresses, hostIds, tokens };
    derived.set(view, footprint);
  }
  return footprint;
}
