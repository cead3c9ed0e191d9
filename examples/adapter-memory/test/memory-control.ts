import type { DiscoveryControl } from '@muster/core/testing';
import { registry } from '../src/registry.js';

/**
 * A fresh registry scope with a conformance control over it: membership changes, an outage
 * (every client call fails), a restart (an outage while `during` runs) and an operator forgetting
 * a registration. Shared by the example's conformance test and core's test of the kit itself.
 */
export function memoryControl(cleanup: () => Promise<void>): { scope: string; control: DiscoveryControl } {
  const scope = `conformance-${Math.random().toString(36).slice(2)}`;
  const r = registry(scope);
  const service = 'svc';
  return {
    scope,
    control: {
      service,
      add: async (e) => r.put(service, { ...e, metadata: {} }),
      setReady: async (id, ready) => r.put(service, { ...r.endpoints(service).find((e) => e.id === id)!, ready }),
      remove: async (id) => r.delete(service, id),
      outage: { begin: async () => r.outage(true), end: async () => r.outage(false) },
      restart: async (during) => {
        r.outage(true);
        try {
          await during();
        } finally {
          r.outage(false);
        }
      },
      forget: async (id) => r.delete(service, id),
      cleanup,
    },
  };
}
