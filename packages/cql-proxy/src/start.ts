import { createMuster, type ConfigSource, type Muster, type MusterConfig } from '@muster/core';
import pino, { type Logger } from 'pino';
import type { ProxyConfig } from './config.js';
import { loadEffectiveConfig, printableConfig, type EffectiveConfig, type EffectiveConfigOptions } from './effective-config.js';
import { CqlProxy } from './proxy/cql-proxy.js';

export interface StartProxyOptions extends EffectiveConfigOptions {
  /** A pino logger to write to; default: JSON logs on stdout at `proxy.log.level`. */
  readonly logger?: Logger;
}

/** A proxy started from code. `close()` drains it (as SIGTERM does for the CLI) and releases its ports. */
export interface ProxyHandle extends AsyncDisposable {
  /** The effective config it runs with (instanceId resolved, defaults filled in). */
  readonly config: ProxyConfig;
  /** The CQL port it listens on (the real one when `listen.port` was 0). */
  readonly port: number;
  /** The operations HTTP port (/metrics, /health/*, /topology). */
  readonly httpPort: number;
  readonly muster: Muster;
  close(): Promise<void>;
}

/** Creates the ports and starts the proxy from a checked config; on failure nothing stays open. */
export async function launchProxy(effective: EffectiveConfig, logger?: Logger): Promise<{ proxy: CqlProxy; muster: Muster; log: Logger }> {
  const { checked, proxy: config } = effective;
  const adapters = Object.fromEntries(checked.ports.map((p) => [p.specifier, p.adapter]));
  const muster = await createMuster(checked.source, { adapters });
  const log = logger?.child({ instance: config.instanceId }) ?? pino({ level: config.log.level, base: { instance: config.instanceId } });
  log.info({ config: printableConfig(effective) }, 'starting muster-cql-proxy');
  const proxy = new CqlProxy(config, muster, log);
  try {
    await proxy.start();
  } catch (error) {
    await proxy.stop().catch(() => undefined);
    await muster.close();
    throw error;
  }
  return { proxy, muster, log };
}

/**
 * Starts a proxy from code: the same config the CLI reads (a YAML path, or an object with
 * `discovery`, `heartbeat` and `proxy` sections), the same validation, no signal handlers.
 *
 * ```ts
 * await using proxy = await startProxy({
 *   discovery: { adapter: 'static', options: { members: [{ id: 'p0', address: '127.0.0.1', port: 9042 }], self: 'p0' } },
 *   proxy: { backend: { contactPoints: ['127.0.0.1:9043'] } },
 * });
 * ```
 */
export async function startProxy(
  config: string | URL | MusterConfig | ConfigSource,
  options: StartProxyOptions = {},
): Promise<ProxyHandle> {
  const effective = await loadEffectiveConfig(config, options);
  const { proxy, muster } = await launchProxy(effective, options.logger);
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= proxy.stop().then(() => muster.close()));
  return {
    config: proxy.config,
    get port() {
      return proxy.port;
    },
    get httpPort() {
      return proxy.httpPort;
    },
    muster,
    close,
    [Symbol.asyncDispose]: close,
  };
}
