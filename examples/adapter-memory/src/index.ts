import { defineAdapter, s } from '@muster/core/adapter';
import { MemoryDiscovery } from './discovery.js';
import { registry } from './registry.js';

/**
 * An example of a third-party adapter: a package of its own that default-exports one
 * defineAdapter() result and uses nothing but @muster/core's public API. A config selects it by
 * package name (`adapter: '@muster-examples/adapter-memory'`) and it must pass the same
 * conformance kit as the built-ins.
 */
export default defineAdapter({
  name: 'memory',
  core: '^0.1.0',
  options: s.object({
    /** Clients of one scope share one registry. */
    scope: s.withDefault(s.string({ minLength: 1 }), 'default'),
  }),
  discovery: (options) => new MemoryDiscovery(registry(options.scope)),
});
