// Backend node health against loopback "nodes" that answer OPTIONS until told to hang: a hung node
// keeps accepting TCP (as a SIGSTOPped Cassandra does), so only an unanswered request reveals it.
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type Socket } from 'node:net';
import { encodeFrame, FrameDecoder, Opcode } from '../../src/protocol/frame.js';
import { encodeSupported } from '../../src/protocol/responses.js';
import { proxyReadiness } from '../../src/http/readiness.js';
import { BackendConnection } from '../../src/proxy/backend-connection.js';
import { BackendPool } from '../../src/proxy/backend-pool.js';
import { NodeHealth, type NodeState } from '../../src/proxy/node-health.js';
import { until } from './harness.js';

interface FakeNode {
  readonly host: string;
  readonly port: number;
  /** Stops answering (connections are still accepted and read). */
  hang(): void;
  resume(): void;
  /** Open connections from the proxy. */
  readonly sockets: Set<Socket>;
}

const servers: Server[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  for (const server of servers.splice(0)) {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

async function fakeNode(): Promise<FakeNode> {
  let hung = false;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    cleanups.push(() => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const decoder = new FrameDecoder();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of decoder.push(chunk)) {
        if (hung) continue;
        const body = encodeSupported({ options: new Map([['CQL_VERSION', ['3.4.7']]]) });
        socket.write(
          encodeFrame({ version: frame.version, response: true, flags: 0, stream: frame.stream, opcode: Opcode.SUPPORTED, body }),
        );
      }
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return { host: '127.0.0.1', port, hang: () => void (hung = true), resume: () => void (hung = false), sockets };
}

function health(options: { interval?: number; timeout?: number } = {}): { health: NodeHealth; changes: NodeState[] } {
  const health = new NodeHealth({
    interval: options.interval ?? 100,
    timeout: options.timeout ?? 300,
    connect: (node, onClose) => BackendConnection.connect({ ...node, version: 4, connectTimeout: 300, onClose }),
  });
  const changes: NodeState[] = [];
  health.onChange((state) => changes.push(state));
  cleanups.push(() => health.close());
  return { health, changes };
}

describe('NodeHealth', () => {
  it('marks a node that accepts TCP but stops answering sick, and healthy again once it answers', async () => {
    const node = await fakeNode();
    const { health: h, changes } = health();
    h.track([node]);
    await until('the first probe to be answered', () => changes.length === 0 && h.states()[0]?.healthy && node.sockets.size > 0);
    node.hang();
    await until('the hung node to be sick', () => !h.isHealthy(node), 10_000);
    expect(h.states()[0]!.reason).toMatch(/no answer to OPTIONS within 300 ms/);
    node.resume();
    await until('the node to be healthy again', () => h.isHealthy(node), 10_000);
    expect(changes.map((c) => c.healthy)).toEqual([false, true]);
  });

  it('marks a node that refuses connections sick', async () => {
    const node = await fakeNode();
    const { health: h } = health();
    h.track([node]);
    await until('a probe connection', () => node.sockets.size > 0);
    const server = servers.pop()!;
    for (const socket of node.sockets) socket.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    await until('the stopped node to be sick', () => !h.isHealthy(node), 10_000);
    expect(h.states()[0]!.reason).toMatch(/cannot connect|closed|ECONNREFUSED/);
  });

  it('a node it does not track counts as healthy; a refused connect reported elsewhere makes a tracked one sick at once', async () => {
    const node = await fakeNode();
    const { health: h } = health({ interval: 60_000 });
    expect(h.isHealthy({ host: '127.0.0.9', port: 1 })).toBe(true);
    h.track([node]);
    h.connectFailed(node, 'ECONNREFUSED');
    expect(h.isHealthy(node)).toBe(false);
  });

  it('keeps telling sick from healthy while nodes leave and rejoin the tracked set (the sick count behind isHealthy)', () => {
    const a = { host: '127.0.0.1', port: 1 };
    const b = { host: '127.0.0.2', port: 1 };
    const { health: h } = health({ interval: 60_000 });
    h.track([a, b]);
    h.connectFailed(a, 'ECONNREFUSED');
    expect([h.isHealthy(a), h.isHealthy(b)]).toEqual([false, true]);
    h.track([b]); // a leaves while sick
    expect(h.isHealthy(a)).toBe(true);
    h.connectFailed(b, 'ECONNREFUSED');
    expect(h.isHealthy(b)).toBe(false);
    h.track([a, b]); // a rejoins, not probed yet: healthy; b stays sick
    expect([h.isHealthy(a), h.isHealthy(b)]).toEqual([true, false]);
    h.connectFailed(a, 'ECONNREFUSED');
    h.connectFailed(a, 'ECONNREFUSED again');
    h.track([b]);
    expect([h.isHealthy(a), h.isHealthy(b)]).toEqual([true, false]);
    const c = { host: '127.0.0.3', port: 1 };
    h.track([b, c]);
    h.track([b]); // a healthy node leaves: b is still the one sick node
    expect([h.isHealthy(b), h.isHealthy(c)]).toEqual([false, true]);
  });
});

describe('BackendPool with node health', () => {
  /** Two healthy nodes, a pool over them and four client connections spread on both. */
  async function twoNodePool() {
    const [a, b] = [await fakeNode(), await fakeNode()];
    const { health: h } = health();
    const nodes = [a, b].map((n) => ({ host: n.host, port: n.port, dataCenter: 'dc1', hostId: undefined }));
    h.track(nodes);
    const pool = new BackendPool({ view: { nodes }, health: h } as never, {
      connectTimeout: 1000,
      maxBodyLength: 1 << 20,
      heartbeatInterval: 30_000,
      onCount: () => undefined,
    });
    /** The node port of each client connection the pool closed, in order. */
    const closed: number[] = [];
    const opened: BackendConnection[] = [];
    for (let i = 0; i < 4; i++) {
      const connection = await pool.connect(4, () => closed.push(connection.address.port));
      opened.push(connection);
    }
    cleanups.push(() => opened.forEach((c) => c.close()));
    return { a, b, h, pool, closed, opened };
  }

  it('closes the client connections on a node that turns sick and opens new ones on a healthy node', async () => {
    const { a, b, pool, closed, opened } = await twoNodePool();
    expect(new Set(opened.map((c) => c.address.port))).toEqual(new Set([a.port, b.port]));
    a.hang();
    await until('the connections pinned to the hung node to be closed', () => closed.length === 2, 10_000);
    expect(closed).toEqual([a.port, a.port]);
    for (let i = 0; i < 4; i++) {
      const connection = await pool.connect(4, () => undefined);
      opened.push(connection);
      expect(connection.address.port).toBe(b.port);
    }
  });

  it('keeps the client connections on a sick node when no other node is healthy (a slow answer beats none)', async () => {
    // One backend node (or all of them) missing a probe, e.g. in a long GC pause: closing its clients
    // would fail their in-flight requests and send every driver into reconnection, to the same node.
    const { a, b, h, closed, opened } = await twoNodePool();
    b.hang();
    await until('b to be sick', () => !h.isHealthy(b), 10_000);
    await until("b's clients to move off it, a being healthy", () => closed.length === 2, 10_000);
    a.hang();
    await until('a to be sick too', () => !h.isHealthy(a), 10_000);
    // The pool hears of the change in the same call that flips isHealthy, and close() marks a
    // connection closed at once: nothing more to wait for.
    expect(opened.filter((c) => c.address.port === a.port && !c.closed)).toHaveLength(2);
  });
});

describe('readiness', () => {
  const node = (healthy: boolean): NodeState => ({ node: '10.0.0.1:9042', healthy, reason: healthy ? undefined : 'no answer', since: 0 });

  it('is 503-worthy with a reason when no backend node answers', () => {
    const r = proxyReadiness({ controlNode: '10.0.0.1:9042', nodes: [node(false)], registered: true, listed: true, draining: false });
    expect(r.ready).toBe(false);
    expect(r.checks).toMatchObject({ backend: false, healthyNodes: '0 of 1', reason: 'no backend node answers' });
    expect(r.checks.sickNodes).toMatch(/10\.0\.0\.1:9042: no answer/);
  });

  it('is ready with one healthy node and a control connection', () => {
    const r = proxyReadiness({
      controlNode: '10.0.0.1:9042',
      nodes: [node(true), node(false)],
      registered: true,
      listed: true,
      draining: false,
    });
    expect(r).toMatchObject({ ready: true, checks: { backend: true, healthyNodes: '1 of 2' } });
  });
});
