// Types for tcp-proxy.mjs, so TypeScript tests can import it.

export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  /** `host:port` to give a client instead of the server's. */
  readonly address: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Connections open now. */
  readonly connections: number;
  /** Delay in ms: `upstream` for client → server bytes, `downstream` for server → client bytes. */
  setDelay(delay: { upstream?: number; downstream?: number }): void;
  /** Resets every open connection (both sides see ECONNRESET). */
  dropConnections(): void;
  /** While true, new connections are reset as soon as they are accepted. */
  refuse(on: boolean): void;
  /** While true, nothing flows either way (requests hang, as with a paused server); hold(false) hands on what was kept back. */
  hold(on: boolean): void;
  close(): Promise<void>;
}

export function startTcpProxy(options: {
  target: { host: string; port: number };
  host?: string;
  port?: number;
  delay?: { upstream?: number; downstream?: number };
}): Promise<TcpProxy>;
