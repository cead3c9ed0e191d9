// Types for proxy-faults.mjs, so TypeScript tests can import it.
import type { TcpProxy } from './tcp-proxy.mjs';

export function proxyFaults(proxy: TcpProxy): {
  outage: { begin(): Promise<void>; end(): Promise<void>; attempts(): number };
  restart(during: () => Promise<void>): Promise<void>;
};

export function proxyHang(proxy: TcpProxy): { begin(): Promise<void>; end(): Promise<void> };
