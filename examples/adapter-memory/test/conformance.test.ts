import { describe, test } from '@jest/globals';
import { createMuster, type Muster } from '@muster/core';
import { discoveryConformance } from '@muster/core/testing';
import { registry } from '../src/index.js';

// Loaded the way a user's config loads it: by package name, through the runtime.
const opened: Muster[] = [];
let scope = '';

discoveryConformance(
  { describe, test },
  {
    name: 'example memory adapter (loaded by package name)',
    capabilities: { register: true },
    faults: { outage: true, restart: true },
    propagation: 2000,
    async service() {
      scope = `conformance-${Math.random().toString(36).slice(2)}`;
      const r = registry(scope);
      const service = 'svc';
      return {
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
        cleanup: async () => void (await Promise.all(opened.splice(0).map((m) => m.close()))),
      };
    },
    factory: async () => {
      const muster = await createMuster({
        discovery: { adapter: '@muster-examples/adapter-memory', options: { scope, renewInterval: '200ms', retryDelay: '50ms' } },
      });
      opened.push(muster);
      return muster.discovery;
    },
  },
);
