/**
 * From a Service's EndpointSlices to Muster endpoints. Pure logic, no I/O.
 *
 * A Service has many slices (at most 100 endpoints each by default, one address family each), and
 * during a move the same endpoint can sit in two slices at once; so endpoints are merged over all
 * slices and de-duplicated by address. Readiness follows the EndpointSlice API rules: a missing
 * `ready` means ready, a missing `serving` defers to ready, a missing `terminating` means false.
 */
import { byId, type Endpoint } from '@muster/core';
import type { KubeObject } from './client.js';

export const serviceNameLabel = 'kubernetes.io/service-name';

export interface SliceEndpoint {
  addresses?: string[] | null;
  conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null } | null;
  hostname?: string | null;
  nodeName?: string | null;
  zone?: string | null;
  targetRef?: { kind?: string; name?: string; namespace?: string } | null;
}

export interface EndpointSliceObject extends KubeObject {
  addressType?: string;
  endpoints?: SliceEndpoint[] | null;
  ports?: { name?: string | null; port?: number | null; protocol?: string | null }[] | null;
}

export interface SliceSelection {
  /** The named port to report as `port`; without it, the slice's only (or unnamed, or first) port. */
  readonly port?: string | undefined;
}

interface Candidate {
  readonly endpoint: Endpoint;
  readonly pod: string | undefined;
  readonly rank: number;
  readonly slice: string;
}

/** A slice's ports by name (an unnamed port is ''), and the one to report. */
function slicePorts(slice: EndpointSliceObject, selection: SliceSelection): { ports: Record<string, number>; selected: number | undefined } {
  const ports: Record<string, number> = {};
  for (const p of slice.ports ?? []) if (typeof p.port === 'number') ports[p.name ?? ''] = p.port;
  if (selection.port !== undefined) return { ports, selected: ports[selection.port] };
  const names = Object.keys(ports).sort();
  const chosen = names.length === 1 ? names[0] : names.includes('') ? '' : names[0];
  return { ports, selected: chosen === undefined ? undefined : ports[chosen] };
}

/** Which copy wins when one address sits in two slices: the most usable one, then the first slice by name. */
const rankOf = (e: Endpoint) => (e.ready ? 0 : e.serving ? 1 : 2);

/**
 * Every endpoint of the Service, one per address, sorted by id. The id is the pod name from
 * `targetRef` when the pod has one address in the view, `<pod>/<address>` for each address of a
 * pod that has several (dual-stack), and the address itself for endpoints without a targetRef.
 * Endpoints whose slice lacks the selected port are left out: they cannot be reached on it.
 */
export function endpointsFromSlices(slices: Iterable<EndpointSliceObject>, selection: SliceSelection = {}): Endpoint[] {
  const byAddress = new Map<string, Candidate>();
  for (const slice of slices) {
    const { ports, selected } = slicePorts(slice, selection);
    if (selected === undefined) continue;
    const sliceName = slice.metadata?.name ?? '';
    for (const e of slice.endpoints ?? []) {
      const ready = e.conditions?.ready ?? true;
      const serving = e.conditions?.serving ?? ready;
      const terminating = e.conditions?.terminating ?? false;
      const pod = e.targetRef?.name || undefined;
      for (const address of e.addresses ?? []) {
        const endpoint: Endpoint = {
          id: address,
          address,
          port: selected,
          ports,
          ready,
          serving,
          terminating,
          ...(e.zone ? { zone: e.zone } : {}),
          ...(e.nodeName ? { nodeName: e.nodeName } : {}),
          metadata: {
            ...(slice.addressType ? { addressType: slice.addressType } : {}),
            ...(e.hostname ? { hostname: e.hostname } : {}),
            ...(pod ? { pod } : {}),
          },
        };
        const candidate: Candidate = { endpoint, pod, rank: rankOf(endpoint), slice: sliceName };
        const seen = byAddress.get(address);
        if (!seen || candidate.rank < seen.rank || (candidate.rank === seen.rank && candidate.slice < seen.slice)) {
          byAddress.set(address, candidate);
        }
      }
    }
  }
  const addressesOfPod = new Map<string, number>();
  for (const c of byAddress.values()) if (c.pod) addressesOfPod.set(c.pod, (addressesOfPod.get(c.pod) ?? 0) + 1);
  const endpoints: Endpoint[] = [];
  for (const c of byAddress.values()) {
    const id = !c.pod ? c.endpoint.address : addressesOfPod.get(c.pod) === 1 ? c.pod : `${c.pod}/${c.endpoint.address}`;
    endpoints.push({ ...c.endpoint, id });
  }
  return endpoints.sort(byId);
}
