/** The API resources the adapter reads and writes, and the shapes it relies on in their objects. */

/** A resource type the adapter uses, with the words RBAC and error messages use for it. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const leases: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' };
export const endpointSlices: ResourceType = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices' };

/** `leases.coordination.k8s.io`: the name `kubectl` and RBAC rules use. */
export const resourceName = (r: ResourceType): string => (r.group ? `${r.plural}.${r.group}` : r.plural);

/** The common part of every object we read. */
export interface KubeObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    /** Set by the API server on create, from its own clock (RFC 3339, whole seconds). */
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

export interface WatchEvent<T> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  readonly object: T;
}

export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

/** The wire form of a Lease's MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
