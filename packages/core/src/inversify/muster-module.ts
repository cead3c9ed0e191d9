import { ContainerModule, type Container } from 'inversify';
import type { ConfigSource, MusterConfig } from '../runtime/config.js';
import { contributionsOf } from '../runtime/contributions.js';
import { createMuster, Muster, type CreateOptions } from '../runtime/muster.js';
import { DiscoveryId, HeartbeatStoreId, LockId, MusterId } from './identifiers.js';

/**
 * Muster as an inversify ContainerModule for an application's own container: loading it
 * (`await container.load(musterModule('./muster.yaml'))`) creates Muster from the config (or takes
 * a Muster already created) and binds the configured ports under DiscoveryId, LockId and
 * HeartbeatStoreId, the Muster under MusterId, and whatever the adapters contribute (their
 * `bindings` hook). Unloading it closes Muster, its ports newest first, once anything resolved
 * MusterId: inversify deactivates only what it activated. `loadMuster` loads and activates it.
 *
 * inversify deactivates in binding order, not in dependency order, so `unbindAll()` may close the
 * ports while your services still use them. Unload your own modules first, then this one: the
 * reverse of loading, as Muster closes its own ports.
 */
export function musterModule(input: string | URL | MusterConfig | ConfigSource | Muster, options: CreateOptions = {}): ContainerModule {
  return new ContainerModule(async (container) => {
    const muster = input instanceof Muster ? input : await createMuster(input, options);
    try {
      container
        .bind(MusterId)
        .toConstantValue(muster)
        .onDeactivation((closing) => closing.close());
      if (muster.has('discovery')) container.bind(DiscoveryId).toConstantValue(muster.discovery);
      if (muster.has('lock')) container.bind(LockId).toConstantValue(muster.lock);
      if (muster.has('heartbeat')) container.bind(HeartbeatStoreId).toConstantValue(muster.heartbeat);
      for (const { adapter, options: adapterOptions, context } of contributionsOf(muster)) {
        adapter.bindings?.(container, adapterOptions, context);
      }
    } catch (error) {
      await muster.close().catch(() => undefined);
      throw error;
    }
  });
}

/**
 * Loads Muster into the application's container (`musterModule`) and activates it, so that
 * unloading the returned module (or `unbindAll`) closes Muster even if nothing ever resolved a
 * port. Unload it after your own modules.
 */
export async function loadMuster(
  container: Container,
  input: string | URL | MusterConfig | ConfigSource | Muster,
  options: CreateOptions = {},
): Promise<ContainerModule> {
  const module = musterModule(input, options);
  await container.load(module);
  container.get(MusterId);
  return module;
}
