/**
 * Consul's health answers as Muster endpoints, and a Registration as a Consul service definition.
 * Pure: no I/O, so it is tested without an agent.
 */
import { InvalidArgumentError, type Endpoint, type Registration } from '@muster/core';
import { byId } from '@muster/core/adapter';
import { checkPathSegment } from './client.js';

/** One element of `/v1/health/service/<name>`, the fields we read. */
export interface HealthEntry {
  readonly Node: {
    readonly Node: string;
    readonly Address: string;
    readonly Datacenter?: string;
    readonly Meta?: Record<string, string> | null;
  };
  readonly Service: {
    readonly ID: string;
    readonly Service: string;
    readonly Address?: string;
    readonly Port: number;
    readonly Tags?: string[] | null;
    readonly Meta?: Record<string, string> | null;
  };
  readonly Checks?: readonly { readonly CheckID: string; readonly Status: string; readonly ServiceID?: string }[] | null;
}

/** Meta keys carrying a named port: `port-native = 9042` ↔ `ports.native`. */
const portKey = /^port-(.+)$/;

/**
 * Endpoints from a health answer. `ready` means every check of the instance (its own and its
 * node's) is passing; maintenance mode (Consul's `_service_maintenance:` / `_node_maintenance`
 * checks) also marks it `terminating`, since an operator is draining it. Tags and meta become
 * metadata: meta as it is, tags joined with commas under `tags`. A service id is unique per agent,
 * not per cluster: ids that repeat across nodes get `@<node>` appended so no instance hides another.
 */
export function toEndpoints(entries: readonly HealthEntry[], options: { readyOnWarning?: boolean } = {}): Endpoint[] {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.Service.ID, (counts.get(e.Service.ID) ?? 0) + 1);
  const ok = (status: string) => status === 'passing' || (options.readyOnWarning === true && status === 'warning');
  const out = entries.map((e): Endpoint => {
    const checks = e.Checks ?? [];
    const meta = e.Service.Meta ?? {};
    const ports: Record<string, number> = {};
    for (const [k, v] of Object.entries(meta)) {
      const m = portKey.exec(k);
      const n = Number(v);
      if (m && Number.isInteger(n) && n > 0 && n < 65536) ports[m[1]!] = n;
    }
    const tags = e.Service.Tags ?? [];
    const maintenance = checks.some((c) => c.CheckID.startsWith('_service_maintenance:') || c.CheckID === '_node_maintenance');
    const zone = meta.zone ?? e.Node.Meta?.zone;
    const rack = meta.rack ?? e.Node.Meta?.rack;
    return {
      id: (counts.get(e.Service.ID) ?? 0) > 1 ? `${e.Service.ID}@${e.Node.Node}` : e.Service.ID,
      // An empty service address means "the node's address" in Consul.
      address: e.Service.Address || e.Node.Address,
      port: e.Service.Port,
      ...(Object.keys(ports).length > 0 ? { ports } : {}),
      ready: checks.every((c) => ok(c.Status)),
      ...(maintenance ? { terminating: true } : {}),
      ...(zone ? { zone } : {}),
      ...(e.Node.Datacenter ? { dc: e.Node.Datacenter } : {}),
      ...(rack ? { rack } : {}),
      nodeName: e.Node.Node,
      metadata: { ...meta, ...(tags.length > 0 ? { tags: tags.join(',') } : {}) },
    };
  });
  return out.sort(byId);
}

/** Consul's rules for meta keys: letters, digits, `-` and `_`, at most 128 characters, no `consul-` prefix. */
const metaKey = /^[A-Za-z0-9_-]{1,128}$/;

export function toServiceDefinition(
  self: Registration,
  options: { checkTtl: number; deregisterCriticalAfter: number },
): Record<string, unknown> {
  const meta: Record<string, string> = { ...self.metadata };
  for (const [name, port] of Object.entries(self.ports ?? {})) meta[`port-${name}`] = String(port);
  for (const k of Object.keys(meta)) {
    if (!metaKey.test(k) || k.startsWith('consul-')) {
      throw new InvalidArgumentError(
        `register(): metadata key ${JSON.stringify(k)} is not a valid Consul meta key (letters, digits, - and _, up to 128, not starting with consul-)`,
      );
    }
  }
  // The id goes into the deregister URL, the name into the one list() and watch() read.
  checkPathSegment('register(): service', self.service);
  checkPathSegment('register(): service id', self.id);
  return {
    ID: self.id,
    Name: self.service,
    Address: self.address,
    Port: self.port,
    ...(self.tags?.length ? { Tags: [...self.tags] } : {}),
    ...(Object.keys(meta).length > 0 ? { Meta: meta } : {}),
    Check: {
      CheckID: `service:${self.id}`,
      Name: 'muster TTL',
      Notes: 'kept passing by the Muster process while it runs',
      TTL: `${Math.max(1, Math.round(options.checkTtl))}ms`,
      // Registered as passing: the process calls register() once it can serve.
      Status: 'passing',
      DeregisterCriticalServiceAfter: `${Math.round(options.deregisterCriticalAfter)}ms`,
    },
  };
}
