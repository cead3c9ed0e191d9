/**
 * From a Service's EndpointSlices to Muster endpoints. Pure logic, no I/O.
 *
 * A Service has many slices (at most 100 endpoints each by default, one address family each), and
 * during a move the same endpoint can sit in two slices at once; so endpoints are merged over all
 * slices and de-duplicated by address. Readiness follows the EndpointSlice API rules: a missing
 * `ready` means ready, a missing `serving` defers to ready, a missing `terminating` means false.
 */
import { InvalidArgumentError, type Endpoint } from '@muster/core';
import { byId } from '@muster/core/adapter';
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

/** One address of one slice, converted once per slice version and reused until the slice changes. */
export interface Candidate {
  /** Its id is the pod name (or the address without a pod) until a pod turns out to have several addresses. */
  readonly endpoint: Endpoint;
  readonly pod: string | undefined;
  readonly rank: number;
  readonly slice: string;
}

/** A slice's ports by name (an unnamed port is ''), and the one to report. */
function slicePorts(
  slice: EndpointSliceObject,
  selection: SliceSelection,
): { ports: Record<string, number>; selected: number | undefined } {
  const ports: Record<string, number> = {};
  for (const p of slice.ports ?? []) if (typeof p.port === 'number') ports[p.name ?? ''] = p.port;
  if (selection.port !== undefined) return { ports, selected: ports[selection.port] };
  const names = Object.keys(ports).sort();
  const chosen = names.length === 1 ? names[0] : names.includes('') ? '' : names[0];
  return { ports, selected: chosen === undefined ? undefined : ports[chosen] };
}

/** Which copy wins when one address sits in two slices: the most usable one, then the first slice by name. */
const rankOf = (ready: boolean, serving: boolean) => (ready ? 0 : serving ? 1 : 2);

/**
 * The endpoints one slice contributes, one per address. Endpoints whose slice lacks the selected
 * port are left out: they cannot be reached on it.
 */
export function sliceCandidates(slice: EndpointSliceObject, selection: SliceSelection = {}): Candidate[] {
  const { ports, selected } = slicePorts(slice, selection);
  if (selected === undefined) return [];
  const sliceName = slice.metadata?.name ?? '';
  const out: Candidate[] = [];
  for (const e of slice.endpoints ?? []) {
    const ready = e.conditions?.ready ?? true;
    const serving = e.conditions?.serving ?? ready;
    const terminating = e.conditions?.terminating ?? false;
    const pod = e.targetRef?.name || undefined;
    const metadata: Record<string, string> = {};
    if (slice.addressType) metadata.addressType = slice.addressType;
    if (e.hostname) metadata.hostname = e.hostname;
    if (pod) metadata.pod = pod;
    for (const address of e.addresses ?? []) {
      const endpoint: { -readonly [K in keyof Endpoint]: Endpoint[K] } = {
        id: pod ?? address,
        address,
        port: selected,
        ports,
        ready,
        serving,
        terminating,
        metadata,
      };
      if (e.zone) endpoint.zone = e.zone;
      if (e.nodeName) endpoint.nodeName = e.nodeName;
      out.push({ endpoint, pod, rank: rankOf(ready, serving), slice: sliceName });
    }
  }
  return out;
}

/**
 * Every endpoint of the Service, de-duplicated by address, sorted by id. The id is the pod name
 * from `targetRef` when the pod has one address in the view, `<pod>/<address>` for each address of
 * a pod that has several (dual-stack), and the address itself for endpoints without a targetRef.
 * Unchanged candidates keep their object identity, so a diff can skip them cheaply.
 */
export function mergeCandidates(perSlice: Iterable<readonly Candidate[]>): Endpoint[] {
  const byAddress = new Map<string, Candidate>();
  for (const candidates of perSlice) {
    for (const c of candidates) {
      const seen = byAddress.get(c.endpoint.address);
      if (!seen || c.rank < seen.rank || (c.rank === seen.rank && c.slice < seen.slice)) byAddress.set(c.endpoint.address, c);
    }
  }
  const addressesOfPod = new Map<string, number>();
  for (const c of byAddress.values()) if (c.pod) addressesOfPod.set(c.pod, (addressesOfPod.get(c.pod) ?? 0) + 1);
  const endpoints: Endpoint[] = [];
  for (const c of byAddress.values()) {
    endpoints.push(c.pod && addressesOfPod.get(c.pod)! > 1 ? { ...c.endpoint, id: `${c.pod}/${c.endpoint.address}` } : c.endpoint);
  }
  return endpoints.sort(byId);
}

/**
 * The port names of a slice that has endpoints but lacks the named port; undefined when it has
 * that port, has no endpoint, or no port is named. Its endpoints are left out (see sliceCandidates).
 */
export function portsWithoutSelected(slice: EndpointSliceObject, selection: SliceSelection): string[] | undefined {
  if (selection.port === undefined || !slice.endpoints?.some((e) => e.addresses?.length)) return undefined;
  const names = Object.keys(slicePorts(slice, selection).ports);
  return names.includes(selection.port) ? undefined : names;
}

/**
 * Why a Service with endpoints shows none: no slice that has them has the named port (a misspelt
 * `port:`). Only a Service without endpoints may read as empty, so this is an error, not a view.
 */
export function missingPortError(service: string, port: string, offered: Iterable<readonly string[]>): InvalidArgumentError {
  const names = [...new Set([...offered].flat())].sort().map((n) => (n === '' ? '(unnamed)' : `'${n}'`));
  return new InvalidArgumentError(
    `Service '${service}' has endpoints, but none of its EndpointSlices has a port named '${port}' (they have ${names.join(', ') || 'no ports'}): set the kubernetes discovery option port to one of those`,
  );
}

export function endpointsFromSlices(slices: Iterable<EndpointSliceObject>, selection: SliceSelection = {}): Endpoint[] {
  const perSlice: Candidate[][] = [];
  for (const slice of slices) perSlice.push(sliceCandidates(slice, selection));
  return mergeCandidates(perSlice);
}
