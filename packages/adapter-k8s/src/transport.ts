/**
 * How bytes reach the API server: https:// or plain http:// (a `kubectl proxy`), directly or
 * through the cluster's HTTP proxy. Sockets are kept alive between calls and do not keep the
 * process alive while idle; close() destroys them.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { TlsMaterial } from './connection.js';
import { proxyAuthorization } from './cluster-address.js';
import { ProxyTunnelAgent } from './proxy-tunnel.js';

export interface HttpExchange {
  readonly method: string;
  /** Path and query on the server. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer | undefined;
  readonly signal: AbortSignal;
}

const unbracket = (host: string) => host.replace(/^\[|\]$/g, '');

export class Transport {
  readonly server: URL;
  readonly proxy: URL | undefined;
  readonly #agent: HttpAgent;
  readonly #route: (exchange: HttpExchange) => RequestOptions;
  readonly #request: typeof httpRequest;

  constructor(server: URL, tls: TlsMaterial, proxy?: URL) {
    this.server = server;
    this.proxy = proxy;
    // No socket limit: every open watch holds a connection of its own.
    const pooled = { keepAlive: true, keepAliveMsecs: 15_000 };
    const direct = (exchange: HttpExchange): RequestOptions => ({
      hostname: unbracket(server.hostname),
      port: server.port || (server.protocol === 'https:' ? 443 : 80),
      path: exchange.path,
    });
    if (server.protocol === 'https:') {
      this.#request = httpsRequest;
      this.#agent = proxy ? new ProxyTunnelAgent(proxy, { ...pooled, ...tls }) : new HttpsAgent({ ...pooled, ...tls });
      this.#route = direct;
    } else if (proxy) {
      // A plain-HTTP server through a proxy: the request goes to the proxy with the absolute URL.
      this.#request = httpRequest;
      this.#agent = new HttpAgent(pooled);
      this.#route = (exchange) => ({
        hostname: unbracket(proxy.hostname),
        port: proxy.port || 80,
        path: `${server.origin}${exchange.path}`,
        headers: { ...exchange.headers, Host: server.host, ...proxyAuthorization(proxy) },
      });
    } else {
      this.#request = httpRequest;
      this.#agent = new HttpAgent(pooled);
      this.#route = direct;
    }
  }

  /** Sends one request; resolves with the response as soon as its head arrives. */
  send(exchange: HttpExchange): Promise<IncomingMessage> {
    return new Promise((resolveResponse, reject) => {
      const req = this.#request(
        { headers: exchange.headers, ...this.#route(exchange), method: exchange.method, agent: this.#agent, signal: exchange.signal },
        resolveResponse,
      );
      req.on('error', reject);
      req.end(exchange.body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
