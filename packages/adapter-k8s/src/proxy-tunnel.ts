/**
 * An https agent whose sockets are TLS over an HTTP CONNECT tunnel through the cluster's
 * `proxy-url`, as kubectl does for an https:// server. The agent pools the tunnelled TLS sockets
 * like any others, so keep-alive works through the proxy too.
 */
import { request as httpRequest, type ClientRequestArgs } from 'node:http';
import { Agent, request as httpsRequest, type AgentOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { connect as connectTls, type ConnectionOptions } from 'node:tls';
import { proxyAuthorization } from './cluster-address.js';

export class ProxyRefusedError extends Error {
  constructor(proxy: URL, target: string, status: number | undefined) {
    super(`proxy ${proxy.origin} answered CONNECT ${target} with ${status ?? 'no status'}`);
    this.name = 'ProxyRefusedError';
  }
}

export class ProxyTunnelAgent extends Agent {
  readonly #proxy: URL;

  constructor(proxy: URL, options: AgentOptions) {
    super(options);
    this.#proxy = proxy;
  }

  // Node's agent accepts a socket handed to the callback later, which a tunnel needs.
  override createConnection(options: ClientRequestArgs, done?: (err: Error | null, socket: Duplex) => void): undefined {
    const host = options.host ?? options.hostname ?? 'localhost';
    const target = `${host.includes(':') ? `[${host}]` : host}:${options.port ?? 443}`;
    const proxy = this.#proxy;
    const send = proxy.protocol === 'https:' ? httpsRequest : httpRequest;
    const connect = send({
      hostname: proxy.hostname.replace(/^\[|\]$/g, ''),
      port: proxy.port || (proxy.protocol === 'https:' ? 443 : 80),
      method: 'CONNECT',
      path: target,
      headers: { Host: target, ...proxyAuthorization(proxy) },
      agent: false,
    });
    const fail = (error: Error) => done?.(error, undefined as unknown as Duplex);
    connect.once('error', fail);
    connect.once('connect', (res, socket, head) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        fail(new ProxyRefusedError(proxy, target, res.statusCode));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      done?.(null, connectTls({ ...(options as ConnectionOptions), socket }));
    });
    connect.end();
    return undefined;
  }
}
