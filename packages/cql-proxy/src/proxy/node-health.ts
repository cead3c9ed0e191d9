import { Opcode } from '../protocol/frame.js';
import type { BackendAddress, BackendConnection } from './backend-connection.js';

/** What is known of one backend node's health. */
export interface NodeState {
  /** `host:port` */
  readonly node: string;
  readonly healthy: boolean;
  /** Why it is sick (the last failure), undefined while healthy. */
  readonly reason: string | undefined;
  /** When it last changed state (ms since the epoch). */
  readonly since: number;
}

export interface NodeHealthOptions {
  /** How often every node is sent OPTIONS (ms). */
  readonly interval: number;
  /** An OPTIONS not answered within this (ms) makes the node sick. */
  readonly timeout: number;
  /**
   * Opens a probe connection to a node (no STARTUP needed: OPTIONS is answered before it);
   * `onClose` is called when it closes.
   */
  readonly connect: (node: BackendAddress, onClose: () => void) => Promise<BackendConnection>;
}

export const nodeKey = (node: BackendAddress): string => `${node.host}:${node.port}`;

interface Probe {
  readonly address: BackendAddress;
  connection: BackendConnection | undefined;
  running: boolean;
  healthy: boolean;
  reason: string | undefined;
  since: number;
}

/**
 * Which backend nodes answer. A hung node (SIGSTOPped, GC-bound, half-open) still accepts TCP, so a
 * successful connect proves nothing: every node gets an OPTIONS on a connection of its own every
 * `interval`, and one that does not answer within `timeout`, or refuses connections, is sick until
 * it answers again. Failures seen elsewhere (a refused connect, a request timeout) trigger a probe
 * at once instead of waiting for the next round. Nodes not probed yet count as healthy.
 */
export class NodeHealth {
  readonly #options: NodeHealthOptions;
  readonly #probes = new Map<string, Probe>();
  readonly #listeners = new Set<(state: NodeState) => void>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  /** How many probes are sick: while none is, {@link isHealthy} (asked per routed request) looks nothing up. */
  #sick = 0;

  constructor(options: NodeHealthOptions) {
    this.#options = options;
  }

  /** Probes exactly these nodes from now on (the backend's current topology). */
  track(nodes: readonly BackendAddress[]): void {
    if (this.#closed) return;
    const keys = new Set(nodes.map(nodeKey));
    for (const [key, probe] of this.#probes) {
      if (keys.has(key)) continue;
      if (!probe.healthy) this.#sick--;
      probe.connection?.close();
      this.#probes.delete(key);
    }
    for (const node of nodes) {
      const key = nodeKey(node);
      if (this.#probes.has(key)) continue;
      this.#probes.set(key, {
        address: { host: node.host, port: node.port },
        connection: undefined,
        running: false,
        healthy: true,
        reason: undefined,
        since: Date.now(),
      });
    }
    this.#timer ??= setInterval(() => this.#round(), this.#options.interval).unref();
  }

  /** Called with every change of a node's state. */
  onChange(listener: (state: NodeState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  isHealthy(node: BackendAddress): boolean {
    if (this.#sick === 0) return true;
    return this.#probes.get(nodeKey(node))?.healthy ?? true;
  }

  states(): NodeState[] {
    return [...this.#probes.entries()].map(([node, p]) => ({ node, healthy: p.healthy, reason: p.reason, since: p.since }));
  }

  /** A connection to `node` could not be opened: it is sick now (a probe will tell when it is back). */
  connectFailed(node: BackendAddress, reason: string): void {
    const probe = this.#probes.get(nodeKey(node));
    if (probe) this.#set(probe, false, reason);
  }

  /** A request to `node` timed out: ask it at once instead of waiting for the next round. */
  suspect(node: BackendAddress): void {
    const probe = this.#probes.get(nodeKey(node));
    if (probe) this.#probe(probe);
  }

  #round(): void {
    for (const probe of this.#probes.values()) this.#probe(probe);
  }

  #probe(probe: Probe): void {
    if (probe.running || this.#closed) return;
    probe.running = true;
    const finish = (error: string | undefined) => {
      probe.running = false;
      if (this.#probes.get(nodeKey(probe.address)) !== probe || this.#closed) return;
      if (error !== undefined) {
        // A fresh connection next round: a reply on this one can no longer be told from a late one.
        probe.connection?.close();
        probe.connection = undefined;
      }
      this.#set(probe, error === undefined, error);
    };
    const ask = (connection: BackendConnection) => {
      let answered = false;
      const timer = setTimeout(
        // The check runs after pending I/O (setImmediate): when the proxy's own event loop was
        // blocked, an answer already waiting in the socket is read before the node is judged.
        () =>
          setImmediate(() => {
            if (answered) return;
            answered = true;
            finish(`no answer to OPTIONS within ${this.#options.timeout} ms`);
          }),
        this.#options.timeout,
      );
      connection.send(Opcode.OPTIONS, Buffer.alloc(0), 0, undefined, (error, response) => {
        if (answered) return;
        answered = true;
        clearTimeout(timer);
        if (error) finish(error.message);
        else if (response!.opcode !== Opcode.SUPPORTED) finish(`answered OPTIONS with opcode 0x${response!.opcode.toString(16)}`);
        else finish(undefined);
      });
    };
    if (probe.connection && !probe.connection.closed) return ask(probe.connection);
    let opened: BackendConnection | undefined;
    // A node that closes the probe's connection (killed, restarting) is asked again at once.
    const onClose = () => opened !== undefined && probe.connection === opened && this.suspect(probe.address);
    this.#options.connect(probe.address, onClose).then(
      (connection) => {
        opened = connection;
        if (this.#closed || this.#probes.get(nodeKey(probe.address)) !== probe) {
          connection.close();
          probe.running = false;
          return;
        }
        probe.connection = connection;
        ask(connection);
      },
      (error: unknown) => finish((error as Error).message),
    );
  }

  #set(probe: Probe, healthy: boolean, reason: string | undefined): void {
    if (probe.healthy === healthy) {
      if (!healthy) probe.reason = reason;
      return;
    }
    probe.healthy = healthy;
    this.#sick += healthy ? -1 : 1;
    probe.reason = healthy ? undefined : reason;
    probe.since = Date.now();
    const state: NodeState = { node: nodeKey(probe.address), healthy, reason: probe.reason, since: probe.since };
    for (const listener of this.#listeners) listener(state);
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
    for (const probe of this.#probes.values()) probe.connection?.close();
    this.#probes.clear();
    this.#sick = 0;
  }
}
