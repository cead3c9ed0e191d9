import { createHash } from 'node:crypto';

/**
 * The namespace of Muster's host ids (a random v4 UUID chosen once). Changing it would give every
 * proxy instance a new host_id, which drivers read as every node being replaced: never change it.
 */
export const HOST_ID_NAMESPACE = '6f3b2c1e-9a4d-4e57-8b1f-2d0c5a7e9b43';

/**
 * The canonical string a host id is derived from. Length prefixes make it unambiguous: without
 * them, cluster `a/b` + instance `c` and cluster `a` + instance `b/c` would share an id.
 */
export function hostIdName(clusterName: string, instanceId: string): string {
  return `muster-cql-proxy:${clusterName.length}:${clusterName}:${instanceId.length}:${instanceId}`;
}

/**
 * The host_id of a proxy instance: a name-based (v5, SHA-1) UUID, RFC 9562 §5.5. It depends on
 * nothing but the cluster name and the instance id, so an instance keeps its host_id across
 * restarts whenever its identity is stable (StatefulSet ordinal, static member id), and every
 * instance computes the same id for every other one.
 */
export function hostIdFor(clusterName: string, instanceId: string): string {
  return nameBasedUuid(HOST_ID_NAMESPACE, hostIdName(clusterName, instanceId));
}

/** A v5 UUID of `name` in `namespace` (both as RFC 9562 defines them). */
export function nameBasedUuid(namespace: string, name: string): string {
  const digest = createHash('sha1')
    .update(Buffer.from(namespace.replaceAll('-', ''), 'hex'))
    .update(name, 'utf8')
    .digest();
  const bytes = digest.subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50; // version 5
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80; // RFC variant
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
