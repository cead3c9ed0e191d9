import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import type { Endpoint } from '@muster/core';
import { decodeError } from '../protocol/error-message.js';
import { encodeFrameHeader, Opcode } from '../protocol/frame.js';

/**
 * What a probe learned about a peer: `up` serves CQL, `draining` answers but is leaving (SIGTERM),
 * `down` did not answer (stopped, killed, unreachable, or refusing clients).
 */
export type PeerState = 'up' | 'draining' | 'down';

/** A probe that got no answer within its timeout: the peer may be stopped, or this process stalled. */
type ProbeResult = PeerState | 'silent';

/** The words a draining proxy refuses new connections with; a probe that reads them knows the peer is leaving. */
export const DRAINING_MESSAGE = 'This proxy is shutting down (draining); use another host';

export interface PeerProbeOptions {
  /** ms between two probes of one peer. */
  readonly interval: number;
  /** ms a probe may take before the peer counts as down. */
  readonly timeout: number;
  /** The peers' CQL listener speaks TLS (proxy.tls): probe over TLS too. */
  readonly tls?: { readonly cert?: Buffer; readonly key?: Buffer };
  /** Called when a peer's state changes (and once for its first probe). */
  readonly onChange: () => void;
}

/**
 * Liveness of peer proxies for membership backends that cannot tell (static members without a
 * shared HeartbeatStore). Every `interval` each peer is asked: over HTTP at its readiness endpoint
 * when its entry names an `http` port (`ports: { http: 9100 }`), else on its native port with a CQL
 * OPTIONS on a short-lived connection (a draining proxy answers that with an ERROR naming its state).
 * A refused or closed connection is DOWN at once (a stopped or killed process). A probe that is not
 * answered in time is DOWN only when the one before it was not answered either: on a starved
 * machine this process, not the peer, is often the one that stalled (it then finds every peer
 * silent at once), and a DOWN is not harmless — gocql closes its pool to a DOWN host, failing
 * what is in flight there.
 */
export class PeerProbe {
  readonly #options: PeerProbeOptions;
  readonly #states = new Map<string, PeerState>();
  /** Peers whose last probe went unanswered while their state was kept. */
  readonly #silent = new Set<string>();
  #peers: readonly Endpoint[] = [];
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(options: PeerProbeOptions) {
    this.#options = options;
  }

  /** A peer's last probed state; undefined before its first probe. */
  state(id: string): PeerState | undefined {
    return this.#states.get(id);
  }

  /** The peers to probe (self excluded by the caller); forgotten peers lose their state. */
  setPeers(peers: readonly Endpoint[]): void {
    this.#peers = peers;
    const ids = new Set(peers.map((p) => p.id));
    for (const id of [...this.#states.keys()]) if (!ids.has(id)) this.#states.delete(id);
    for (const id of [...this.#silent]) if (!ids.has(id)) this.#silent.delete(id);
  }

  /** Probes every peer once, now (so the first view already knows who answers), then every interval. */
  async start(): Promise<void> {
    await this.probeAll();
    if (this.#closed) return;
    this.#timer = setInterval(() => {
      this.#running ??= this.probeAll().finally(() => (this.#running = undefined));
    }, this.#options.interval);
    this.#timer.unref();
  }

  async probeAll(): Promise<void> {
    const peers = this.#peers;
    const results = await Promise.all(peers.map((peer) => this.#probe(peer)));
    if (this.#closed) return;
    let changed = false;
    peers.forEach((peer, i) => {
      const state = this.#judge(peer.id, results[i]!);
      if (this.#states.get(peer.id) !== state) changed = true;
      this.#states.set(peer.id, state);
    });
    if (changed) this.#options.onChange();
  }

  /** A first unanswered probe keeps an answering peer's state; a second one in a row is DOWN. */
  #judge(id: string, result: ProbeResult): PeerState {
    if (result !== 'silent') {
      this.#silent.delete(id);
      return result;
    }
    const previous = this.#states.get(id);
    if (previous !== undefined && previous !== 'down' && !this.#silent.has(id)) {
      this.#silent.add(id);
      return previous;
    }
    return 'down';
  }

  #probe(peer: Endpoint): Promise<ProbeResult> {
    const http = peer.ports?.['http'];
    return http !== undefined ? this.#probeHttp(peer.address, http) : this.#probeNative(peer.address, peer.port);
  }

  async #probeHttp(address: string, port: number): Promise<ProbeResult> {
    const host = address.includes(':') ? `[${address}]` : address;
    try {
      const response = await fetch(`http://${host}:${port}/health/readiness`, { signal: AbortSignal.timeout(this.#options.timeout) });
      const body = (await response.json().catch(() => ({}))) as { checks?: { draining?: unknown } };
      if (response.ok) return 'up';
      return body.checks?.draining === true ? 'draining' : 'down';
    } catch (error) {
      return (error as Error)?.name === 'TimeoutError' ? 'silent' : 'down';
    }
  }

  #probeNative(address: string, port: number): Promise<ProbeResult> {
    return new Promise((resolve) => {
      const tls = this.#options.tls;
      // Liveness only, nothing secret is exchanged: the peer's certificate is not verified here.
      const socket: Socket = tls
        ? connectTls({ host: address, port, rejectUnauthorized: false, ...(tls.cert && tls.key ? { cert: tls.cert, key: tls.key } : {}) })
        : connectTcp({ host: address, port });
      let received = Buffer.alloc(0);
      let settled = false;
      const done = (state: ProbeResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.removeAllListeners('data');
        socket.on('error', () => undefined);
        socket.destroy();
        resolve(state);
      };
      const timer = setTimeout(() => done('silent'), this.#options.timeout);
      socket.once(tls ? 'secureConnect' : 'connect', () => {
        socket.write(encodeFrameHeader({ version: 4, response: false, flags: 0, stream: 0, opcode: Opcode.OPTIONS }, 0));
      });
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length < 9) return;
        const opcode = received[4];
        if (opcode === Opcode.SUPPORTED) return done('up');
        const length = received.readInt32BE(5);
        if (received.length < 9 + length) return;
        if (opcode !== Opcode.ERROR) return done('down');
        let message = '';
        try {
          message = decodeError(received.subarray(9, 9 + length)).message;
        } catch {
          // An undecodable error is still a refusal.
        }
        done(message === DRAINING_MESSAGE ? 'draining' : 'down');
      });
      socket.on('error', () => done('down'));
      socket.on('close', () => done('down'));
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.#running;
  }
}
