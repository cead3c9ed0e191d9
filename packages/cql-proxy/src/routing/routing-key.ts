/**
 * The bytes Cassandra hashes for a partition: a single-column key is its value as bound; a
 * composite key is each component as [unsigned short length][bytes][0] (CompositeType's layout).
 */
export function routingKey(components: readonly Buffer[]): Buffer {
  if (components.length === 1) return components[0]!;
  let size = 0;
  for (const c of components) size += c.length + 3;
  const key = Buffer.allocUnsafe(size);
  let at = 0;
  for (const c of components) {
    key.writeUInt16BE(c.length, at);
    c.copy(key, at + 2);
    at += c.length + 2;
    key[at++] = 0;
  }
  return key;
}
