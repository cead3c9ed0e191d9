import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ProxyMetrics } from './metrics.js';

export interface Readiness {
  readonly ready: boolean;
  readonly checks: Readonly<Record<string, boolean | string>>;
}

export interface OperationsSources {
  readonly metrics: ProxyMetrics;
  readiness(): Readiness;
  /** What operators need to debug the ring: ordered members, tokens, host ids. */
  topology(): unknown;
}

/** One HTTP port for operations: /metrics, /health/liveness, /health/readiness, /topology. */
export function createOperationsServer(sources: OperationsSources): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: string, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, JSON.stringify({ error: 'only GET' }));
    switch (path) {
      case '/metrics':
        sources.metrics.registry.metrics().then(
          (text) => send(200, text, sources.metrics.registry.contentType),
          (error: unknown) => send(500, JSON.stringify({ error: String(error) })),
        );
        return;
      case '/health/liveness':
        return send(200, JSON.stringify({ status: 'alive' }));
      case '/health/readiness': {
        const r = sources.readiness();
        return send(r.ready ? 200 : 503, JSON.stringify({ status: r.ready ? 'ready' : 'not ready', checks: r.checks }));
      }
      case '/topology':
        return send(
          200,
          JSON.stringify(sources.topology(), (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2),
        );
      default:
        return send(404, JSON.stringify({ error: `no such endpoint; try /metrics, /health/liveness, /health/readiness, /topology` }));
    }
  });
}
