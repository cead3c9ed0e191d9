import { describe, test } from '@jest/globals';
import { createMuster, type Muster } from '@muster/core';
import { discoveryConformance } from '@muster/core/testing';
import { memoryControl } from './memory-control.js';

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
    recovery: 5000,
    async service() {
      const made = memoryControl(async () => void (await Promise.all(opened.splice(0).map((m) => m.close()))));
      scope = made.scope;
      return made.control;
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
