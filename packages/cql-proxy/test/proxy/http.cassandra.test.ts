// The operations HTTP port (running.proxy.httpPort): /metrics in Prometheus text, /health/readiness
// (200 when ready, 503 while draining), /topology (the ordered ring with host ids and tokens),
// against three proxies in front of the testenv Cassandra. The backend is reached through a relay
// that can hold traffic, so a forwarded request stays in flight and the drain can be observed.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { decodeCell } from '../../src/protocol/cells.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { decodeResult } from '../../src/protocol/result.js';
import { startStaticCluster, until, type CassandraEntry, type StaticCluster } from './harness.js';
import { RawClient } from './raw-client.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 120_000;
// Every test here, not only the hooks: jest's 5 s default ran out on a loaded machine (load 26 on 2 cores).
jest.setTimeout(TIMEOUT);

/** A TCP relay to the backend whose proxy→backend direction can be held and released. */
class GateRelay {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #held: (() => void)[] = [];
  #holding = false;
  port = 0;

  constructor(readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.#server = createServer((client) => {
      const upstream = connect(this.target);
      this.#sockets.add(client).add(upstream);
      client.on('data', (chunk: Buffer) => {
        if (this.#holding) this.#held.push(() => upstream.write(chunk));
        else upstream.write(chunk);
      });
      upstream.on('data', (chunk: Buffer) => client.write(chunk));
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as { port: number }).port;
  }

  hold(): void {
    this.#holding = true;
  }

  release(): void {
    this.#holding = false;
    for (const write of this.#held.splice(0)) write();
  }

  async stop(): Promise<void> {
    this.release();
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}

async function get(port: number, path: string): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: await res.text() };
}

/** The value of one Prometheus sample, by metric name and labels (all given labels must match). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

async function cql(address: string): Promise<RawClient> {
  const c = await RawClient.open(address);
  c.send(4, 1, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
  expect((await c.next(1))?.opcode).toBe(Opcode.READY);
  return c;
}

const query = (text: string) => encodeQuery({ query: text, parameters: { consistency: Consistency.ONE } }, 4);

(backend ? describe : describe.skip)('the operations HTTP port', () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  let cluster: StaticCluster;
  let relay: GateRelay;
  let port: number;
  const hostOf = (id: string) => cluster.hostOf(id);
  const http = (id: string) => cluster.proxies.get(id)!.proxy.httpPort;

  beforeAll(async () => {
    const [host, nativePort] = backend!.contactPoints[0]!.split(':');
    relay = new GateRelay({ host: host!, port: Number(nativePort) });
    await relay.start();
    const relayed = [`127.0.0.1:${relay.port}`];
    cluster = await startStaticCluster(
      { ...backend!, contactPoints: relayed },
      {
        ids,
        name: 'http',
        // Started out of order: the ring order must not depend on it.
        order: ['proxy-c', 'proxy-a', 'proxy-b'],
        proxy: {
          shutdown: { drainTimeout: '20s' },
          // A held relay is a hung node to the health probes: they must not give up on it here.
          backend: { contactPoints: relayed, probeTimeout: '60s' },
        },
      },
    );
    port = cluster.port('proxy-a');
  }, TIMEOUT);

  afterAll(async () => {
    relay?.release();
    await cluster?.stop();
    await relay?.stop();
  }, TIMEOUT);

  it('/metrics: Prometheus text with client connections and request duration histograms', async () => {
    const address = `${hostOf('proxy-a')}:${port}`;
    const clients = [await cql(address), await cql(address)];
    clients[0]!.send(4, 2, Opcode.QUERY, query('SELECT * FROM system.peers'));
    expect((await clients[0]!.next(2))?.opcode).toBe(Opcode.RESULT);
    clients[1]!.send(4, 2, Opcode.QUERY, query('SELECT keyspace_name FROM system_schema.keyspaces'));
    expect((await clients[1]!.next(2))?.opcode).toBe(Opcode.RESULT);

    const metrics = await get(http('proxy-a'), '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain/);
    expect(metrics.body).toMatch(/^# HELP muster_proxy_client_connections /m);
    expect(metrics.body).toMatch(/^# TYPE muster_proxy_client_connections gauge$/m);
    expect(sample(metrics.body, 'muster_proxy_client_connections')).toBe(2);
    expect(metrics.body).toMatch(/^# TYPE muster_proxy_request_duration_seconds histogram$/m);
    for (const kind of ['system', 'forwarded']) {
      expect(sample(metrics.body, 'muster_proxy_request_duration_seconds_count', { kind })).toBeGreaterThanOrEqual(1);
      expect(sample(metrics.body, 'muster_proxy_request_duration_seconds_sum', { kind })).toBeGreaterThan(0);
      expect(sample(metrics.body, 'muster_proxy_request_duration_seconds_bucket', { kind, le: '+Inf' })).toBe(
        sample(metrics.body, 'muster_proxy_request_duration_seconds_count', { kind }),
      );
    }
    // Another instance counts its own clients only.
    expect(sample((await get(http('proxy-b'), '/metrics')).body, 'muster_proxy_client_connections')).toBe(0);

    for (const c of clients) c.close();
    await until(
      'the gauge back to 0',
      async () => sample((await get(http('proxy-a'), '/metrics')).body, 'muster_proxy_client_connections') === 0,
      10_000,
    );
  });

  it('/topology: the same ordered ring on every instance, with host ids and tokens', async () => {
    const views = await Promise.all(ids.map(async (id) => ({ id, res: await get(http(id), '/topology') })));
    const ring = (body: string) =>
      (
        JSON.parse(body) as {
          members: { id: string; address: string; port: number; hostId: string; tokens: string[]; up: boolean; self: boolean }[];
        }
      ).members;
    for (const { id, res } of views) {
      expect(res.status).toBe(200);
      expect(res.type).toMatch(/^application\/json/);
      const body = JSON.parse(res.body) as { instanceId: string };
      expect(body.instanceId).toBe(id);
      const members = ring(res.body);
      expect(members.map((m) => m.id)).toEqual(ids); // ring order is by id, not start order
      expect(members.filter((m) => m.self).map((m) => m.id)).toEqual([id]);
      for (const m of members) {
        expect(m.hostId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(m.tokens).toHaveLength(8);
        expect(m).toMatchObject({ address: hostOf(m.id), port });
      }
    }
    // Every instance derives the same host ids and tokens; all distinct.
    const strip = (body: string) => ring(body).map(({ id, hostId, tokens }) => ({ id, hostId, tokens }));
    expect(strip(views[1]!.res.body)).toEqual(strip(views[0]!.res.body));
    expect(strip(views[2]!.res.body)).toEqual(strip(views[0]!.res.body));
    const members = ring(views[0]!.res.body);
    expect(new Set(members.map((m) => m.hostId)).size).toBe(3);
    expect(new Set(members.flatMap((m) => m.tokens)).size).toBe(24);

    // And it is what the CQL side says: system.local's host_id on proxy-b is its topology host id.
    const c = await cql(`${hostOf('proxy-b')}:${port}`);
    c.send(4, 2, Opcode.QUERY, query('SELECT host_id FROM system.local'));
    const result = decodeResult((await c.next(2))!.body, 4);
    c.close();
    if (result.kind !== 'Rows') throw new Error(result.kind);
    expect(decodeCell(result.metadata.columns![0]!.type, result.rows[0]![0]!)).toBe(members.find((m) => m.id === 'proxy-b')!.hostId);
  });

  it('/health/readiness: 200 JSON when ready; 503 while draining with a request in flight; new requests still answered', async () => {
    const ready = await get(http('proxy-c'), '/health/readiness');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({
      status: 'ready',
      checks: {
        backend: true,
        registered: true,
        listed: true,
        draining: false,
        controlNode: `127.0.0.1:${relay.port}`,
        healthyNodes: '1 of 1',
      },
    });
    expect((await get(http('proxy-c'), '/health/liveness')).status).toBe(200);

    const victim = cluster.proxies.get('proxy-c')!;
    const client = await cql(`${hostOf('proxy-c')}:${port}`);
    relay.hold();
    client.send(4, 2, Opcode.QUERY, query('SELECT keyspace_name FROM system_schema.keyspaces'));
    await until(
      'the request in flight',
      async () => sample((await get(http('proxy-c'), '/metrics')).body, 'muster_proxy_in_flight_requests') === 1,
      10_000,
    );
    // The held request holds one stream id on its backend connection.
    expect(sample((await get(http('proxy-c'), '/metrics')).body, 'muster_proxy_backend_stream_ids_in_use')).toBe(1);

    const stopping = victim.proxy.stop();
    const draining = await until(
      '503 from readiness',
      async () => {
        const r = await get(http('proxy-c'), '/health/readiness');
        return r.status === 503 ? r : undefined;
      },
      10_000,
    );
    expect(JSON.parse(draining.body)).toMatchObject({ status: 'not ready', checks: { draining: true } });
    // A new request while draining is forwarded too: OVERLOADED would fail a non-idempotent
    // statement, which drivers do not retry (drain.ts).
    client.send(4, 3, Opcode.QUERY, query('SELECT keyspace_name FROM system_schema.keyspaces'));
    // Still draining while the first request is held.
    expect((await get(http('proxy-c'), '/health/readiness')).status).toBe(503);

    relay.release();
    expect((await client.next(2))?.opcode).toBe(Opcode.RESULT);
    expect((await client.next(3))?.opcode).toBe(Opcode.RESULT);
    client.close(); // the driver moving away ends the drain's grace
    await stopping;
    await expect(get(http('proxy-c'), '/health/readiness')).rejects.toThrow();
    client.close();
    cluster.proxies.delete('proxy-c');
  });
});
