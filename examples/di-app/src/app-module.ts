import { ContainerModule, type ServiceIdentifier } from 'inversify';
import { DiscoveryId, HeartbeatStoreId, LockId } from '@muster/core/inversify';
import { Compaction } from './compaction.js';
import { Presence } from './presence.js';
import { Roster } from './roster.js';

export interface AppSettings {
  readonly service: string;
  readonly memberId: string;
}

// The application's own identifiers: its classes are the services (a class is an identifier).
export const AppSettingsId: ServiceIdentifier<AppSettings> = Symbol.for('di-app.settings');

/**
 * The application's classes, built by its container with Muster's ports injected. No decorators
 * (toResolvedValue names the dependencies), so no reflect-metadata and no compiler flags.
 * Deactivation stops what each one started; the container calls it when this module unloads.
 */
export function appModule(settings: AppSettings): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(AppSettingsId).toConstantValue(settings);
    bind(Roster)
      .toResolvedValue((discovery, s) => new Roster(discovery, s.service), [DiscoveryId, AppSettingsId])
      .inSingletonScope();
    bind(Compaction)
      .toResolvedValue((lock) => new Compaction(lock), [LockId])
      .inSingletonScope()
      .onDeactivation((compaction) => compaction.stop());
    bind(Presence)
      .toResolvedValue((heartbeat, s) => new Presence(heartbeat, s.memberId), [HeartbeatStoreId, AppSettingsId])
      .inSingletonScope()
      .onDeactivation((presence) => presence.leave());
  });
}
