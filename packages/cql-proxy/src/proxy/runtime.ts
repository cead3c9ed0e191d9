import type { EffectiveConfig } from '../effective-config.js';
import { launchProxy } from '../start.js';
import type { CqlProxy } from './cql-proxy.js';

/**
 * Runs the proxy until SIGTERM or SIGINT, then drains (DESIGN §2.3). The effective config is
 * logged at start with secrets redacted.
 */
export async function runProxy(effective: EffectiveConfig): Promise<CqlProxy> {
  const { proxy, muster, log } = await launchProxy(effective);
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
