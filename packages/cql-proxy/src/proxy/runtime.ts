import { createMuster, type ConfigSource } from '@muster/core';
import pino from 'pino';
import { readProxyConfig, redact, type ProxyConfig } from '../config.js';
import { CqlProxy } from './cql-proxy.js';

/**
 * Runs the proxy until SIGTERM or SIGINT, then drains (DESIGN §2.3). The effective config is
 * logged at start with secrets redacted.
 */
export async function runProxy(source: ConfigSource, overrides: Partial<ProxyConfig> = {}): Promise<CqlProxy> {
  const muster = await createMuster(source);
  const config = { ...readProxyConfig(source, muster.discovery.self?.id), ...overrides };
  const log = pino({ level: config.log.level, base: { instance: config.instanceId } });
  log.info({ config: redact({ ...source.data, proxy: config }) }, 'starting muster-cql-proxy');
  const proxy = new CqlProxy(config, muster, log);
  try {
    await proxy.start();
  } catch (error) {
    await proxy.stop().catch(() => undefined);
    await muster.close();
    throw error;
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    proxy
      .stop()
      .then(() => muster.close())
      .then(
        () => log.info('stopped'),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exitCode = 1;
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return proxy;
}
