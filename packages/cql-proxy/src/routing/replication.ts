/** How a keyspace places its replicas, as far as the proxy routes by it. */
export type Replication =
  | { readonly kind: 'simple'; readonly factor: number }
  /** Replicas per data center. */
  | { readonly kind: 'network'; readonly factors: ReadonlyMap<string, number> };

const strategyName = (cls: string): string => cls.slice(cls.lastIndexOf('.') + 1);

/**
 * Reads system_schema.keyspaces' `replication` map. Undefined for any other strategy
 * (LocalStrategy, EverywhereStrategy, a custom one) or a map it cannot read: those keyspaces are
 * not routed by replica.
 */
export function parseReplication(options: ReadonlyMap<string, string> | Readonly<Record<string, string>>): Replication | undefined {
  const entries = options instanceof Map ? [...options.entries()] : Object.entries(options);
  const map = new Map(entries);
  const cls = map.get('class');
  if (!cls) return undefined;
  const factorOf = (value: string): number | undefined => {
    // A transient replica count is written "3/1": all of them are replicas for routing.
    const n = Number(value.split('/')[0]);
    return Number.isInteger(n) && n >= 0 ? n : undefined;
  };
  switch (strategyName(cls)) {
    case 'SimpleStrategy': {
      const factor = factorOf(map.get('replication_factor') ?? '');
      return factor === undefined ? undefined : { kind: 'simple', factor };
    }
    case 'NetworkTopologyStrategy': {
      const factors = new Map<string, number>();
      for (const [key, value] of map) {
        if (key === 'class' || key === 'replication_factor') continue;
        const factor = factorOf(value);
        if (factor === undefined) return undefined;
        factors.set(key, factor);
      }
      return { kind: 'network', factors };
    }
    default:
      return undefined;
  }
}
