import type { Endpoint, JsonValue, MemberHeartbeat } from '@muster/core';
import { isAdvertisable } from './address.js';
import { hostIdFor } from './host-id.js';
import { assignTokens, type TokenOptions } from './tokens.js';

/**
 * The virtual cluster's member list, derived from Discovery (who exists, where, ready) and the
 * HeartbeatStore (who is alive now). Every instance derives the same ordered list from the same
 * inputs: the order is by instance id (then address:port), compared by code unit, so it depends
 * neither on which instance computes it (no "self last"), nor on map or input order, nor on the
 * process locale. The ZDM Kubernetes patch got both wrong, and its instances disagreed on the ring.
 */

export interface VirtualMember {
  readonly id: string;
  /** Where drivers dial it. For self this may be unspecified; system.local then uses the socket's address. */
  readonly address: string;
  readonly nativePort: number;
  readonly dc: string;
  readonly rack: string;
  /** Discovery routes to it (ready and not terminating). */
  readonly ready: boolean;
  /** Its heartbeat is fresh (see {@link MembershipOptions.requireHeartbeat} for members with none). */
  readonly alive: boolean;
  /** ready and alive: what STATUS_CHANGE reports. */
  readonly up: boolean;
  readonly hostId: string;
  /** Murmur3 tokens as decimal strings, in set<varchar> order. */
  readonly tokens: readonly string[];
  /** The backend release version this instance reported in its heartbeat, if it did. */
  readonly releaseVersion?: string;
  readonly self: boolean;
  /** `address` is an IP a driver can dial; members without one are never listed in system.peers. */
  readonly advertisable: boolean;
  /** From the heartbeat: which process holds the id, and when it was last seen (local clock, ms). */
  readonly incarnation?: string;
  readonly lastSeen?: number;
}

/** What this process knows of itself; it is a member even before Discovery lists it. */
export interface SelfIdentity {
  readonly id: string;
  /** The advertised address; when absent, Discovery's, and failing that the accepted socket's. */
  readonly address?: string;
  /** The port this instance serves CQL on. */
  readonly nativePort: number;
  /** False while draining, so the member list shows self as not ready. Default true. */
  readonly ready?: boolean;
  readonly dc?: string;
  readonly rack?: string;
}

export interface MemberPlacement {
  readonly dc?: string;
  readonly rack?: string;
}

export interface MembershipOptions {
  /** Part of every host id; normally the backend's cluster_name. */
  readonly clusterName: string;
  /** The backend's local DC: the default data_center, so drivers' replication checks see a DC they know. */
  readonly defaultDc: string;
  readonly defaultRack?: string;
  /** Per-instance placement, winning over Discovery's dc/rack hints. */
  readonly placement?: Readonly<Record<string, MemberPlacement>>;
  readonly tokens?: TokenOptions;
  /**
   * Whether a member needs a heartbeat to count as alive (default true). With a HeartbeatStore
   * this must stay true: a member whose heartbeat is missing — not written yet, or deleted with
   * its Consul session — is DOWN. Set false only when no HeartbeatStore is configured, so
   * Discovery's `ready` alone decides.
   */
  readonly requireHeartbeat?: boolean;
}

export interface MembershipInput {
  readonly self: SelfIdentity;
  readonly endpoints: readonly Endpoint[];
  /** As the HeartbeatStore last reported them: `alive` is its verdict (see MembershipTracker). */
  readonly heartbeats: readonly MemberHeartbeat[];
}

export interface ExcludedEndpoint {
  readonly endpoint: Endpoint;
  readonly reason: string;
}

export interface Membership {
  readonly selfId: string;
  /** The ordered ring, self included. */
  readonly members: readonly VirtualMember[];
  /** Endpoints left out, with why (to be logged): duplicates of another member's id or address:port. */
  readonly excluded: readonly ExcludedEndpoint[];
}

export const DEFAULT_RACK = 'rack1';

const codeUnitOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const hostPort = (e: { address: string; port: number }) => `${e.address}:${e.port}`;

/** The ring order: instance id, else address:port (an adapter that reports no id). */
export function memberKey(endpoint: Pick<Endpoint, 'id' | 'address' | 'port'>): string {
  return endpoint.id !== '' ? endpoint.id : hostPort(endpoint);
}

function byRingOrder(a: Endpoint, b: Endpoint): number {
  return codeUnitOrder(memberKey(a), memberKey(b)) || codeUnitOrder(hostPort(a), hostPort(b));
}

function releaseVersionOf(payload: JsonValue): string | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return undefined;
  const v = payload['releaseVersion'];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Self as an endpoint, merging what this process knows with what Discovery says of it. */
function selfEndpoint(self: SelfIdentity, listed: Endpoint | undefined): Endpoint {
  return {
    id: self.id,
    address: self.address ?? listed?.address ?? '0.0.0.0',
    port: self.nativePort,
    ready: (self.ready ?? true) && (listed === undefined || (listed.ready && !listed.terminating)),
    ...(self.dc !== undefined || listed?.dc !== undefined ? { dc: self.dc ?? listed?.dc } : {}),
    ...(self.rack !== undefined || listed?.rack !== undefined ? { rack: self.rack ?? listed?.rack } : {}),
    metadata: listed?.metadata ?? {},
  };
}

export function deriveMembership(input: MembershipInput, options: MembershipOptions): Membership {
  const excluded: ExcludedEndpoint[] = [];
  const sorted = [...input.endpoints].sort(byRingOrder);
  const byKey = new Map<string, Endpoint>();
  for (const e of sorted) {
    const key = memberKey(e);
    const held = byKey.get(key);
    // Two entries for one id (an instance mid-move between slices): keep the ready one, else the first.
    if (held === undefined) byKey.set(key, e);
    else if (!held.ready && e.ready) {
      byKey.set(key, e);
      excluded.push({ endpoint: held, reason: `duplicate of member ${key}` });
    } else excluded.push({ endpoint: e, reason: `duplicate of member ${key}` });
  }
  const selfKey = input.self.id;
  const self = selfEndpoint(input.self, byKey.get(selfKey));
  byKey.set(selfKey, self);

  // Drivers key hosts by address:port; a second member at the same one would shadow the first.
  // Self keeps its own address whatever sorts before it: it knows it is there.
  const ring: Endpoint[] = [];
  const atAddress = new Map<string, string>([[hostPort(self), selfKey]]);
  for (const e of [...byKey.values()].sort(byRingOrder)) {
    const key = memberKey(e);
    const owner = atAddress.get(hostPort(e));
    if (owner !== undefined && owner !== key && isAdvertisable(e.address)) {
      excluded.push({ endpoint: e, reason: `${hostPort(e)} is already member ${owner}'s address` });
      continue;
    }
    if (isAdvertisable(e.address)) atAddress.set(hostPort(e), key);
    ring.push(e);
  }

  const tokens = assignTokens(ring.map(memberKey), options.tokens);
  const heartbeats = new Map(input.heartbeats.map((hb) => [hb.memberId, hb]));
  const requireHeartbeat = options.requireHeartbeat ?? true;
  const members = ring.map((e): VirtualMember => {
    const id = memberKey(e);
    const self = id === selfKey;
    const hb = heartbeats.get(id);
    // Self is running by definition; anyone else without a heartbeat is not known to be.
    const alive = hb !== undefined ? hb.alive : self || !requireHeartbeat;
    const ready = e.ready && e.terminating !== true;
    const placement = options.placement?.[id];
    const releaseVersion = hb !== undefined ? releaseVersionOf(hb.payload) : undefined;
    return {
      id,
      address: e.address,
      nativePort: e.port,
      dc: placement?.dc ?? e.dc ?? options.defaultDc,
      rack: placement?.rack ?? e.rack ?? options.defaultRack ?? DEFAULT_RACK,
      ready,
      alive,
      up: ready && alive,
      hostId: hostIdFor(options.clusterName, id),
      tokens: tokens.get(id) ?? [],
      ...(releaseVersion !== undefined ? { releaseVersion } : {}),
      self,
      advertisable: isAdvertisable(e.address),
      ...(hb !== undefined ? { incarnation: hb.incarnation, lastSeen: hb.lastSeen } : {}),
    };
  });
  return { selfId: selfKey, members, excluded };
}
