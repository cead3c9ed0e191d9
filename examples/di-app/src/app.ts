import { Container } from 'inversify';
import type { ConfigSource, CreateOptions, MusterConfig } from '@muster/core';
import { loadMuster } from '@muster/core/inversify';
import { appModule, type AppSettings } from './app-module.js';

export interface App extends AsyncDisposable {
  readonly container: Container;
  /** Stops the application's services, then Muster (its ports newest first). */
  stop(): Promise<void>;
}

/**
 * Loads Muster into the application's own container, then the application's classes, which get
 * Discovery, Lock and HeartbeatStore injected. Stopping unloads in the reverse order: inversify
 * deactivates in binding order, not dependency order, so `container.unbindAll()` could close a Lock
 * while a service still holds a lease on it.
 */
export async function startApp(
  config: string | URL | MusterConfig | ConfigSource,
  settings: AppSettings,
  options?: CreateOptions,
): Promise<App> {
  const container = new Container();
  const muster = await loadMuster(container, config, options);
  const app = appModule(settings);
  await container.load(app);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await container.unload(app);
      await container.unload(muster);
    })());
  return { container, stop, [Symbol.asyncDispose]: stop };
}
