import { createDiscovery, defineAdapter, s } from '@muster/core/adapter';
import { MemoryBackend } from './discovery.js';
import { registry } from './registry.js';

/**
 * An example of a third-party adapter: a package of its own that default-exports one
 * defineAdapter() result and uses nothing but @muster/core's public API. A config selects it by
 * package name (`adapter: '@muster-examples/adapter-memory'`) and it must pass the same
 * conformance kit as the built-ins. It writes only a backend; core builds the Discovery port.
 */
export default defineAdapter({
  name: 'memory',
  core: '^0.1.0',
  options: s.object({
    /** Clients of one scope share one registry. */
    scope: s.withDefault(s.string({ minLength: 1 }), 'default'),
    /** How often a registration is confirmed (and restored if the registry forgot it). */
    renewInterval: s.withDefault(s.duration({ min: 10 }), 1000),
    /** First wait after a failure (doubling up to 30 s). */
    retryDelay: s.withDefault(s.duration({ min: 1 }), 800),
  }),
  discovery: (options) =>
    createDiscovery(new MemoryBackend(registry(options.scope), { renewInterval: options.renewInterval }), {
      backoff: { initialMs: options.retryDelay },
    }),
});
