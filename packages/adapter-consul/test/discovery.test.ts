// The discovery watch loop against a scripted loopback agent (no Consul needed): degraded keeps the
// last endpoints, recovered then the difference; an index that goes backwards is a new view; index 0
// is never waited on; a non-transient error before the first snapshot fails the watch.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DiscoveryEvent } from '@muster/core';
import { ConsulClient } from '../src/client.js';
import { consulDiscovery } from '../src/discovery.js';
import type { HealthEntry } from '../src/health.js';

type Step = { status: number; index?: number; body: unknown };
let script: Step[] = [];
const asked: (string | null)[] = [];
/** Requests for other services (late arrivals of an earlier test's aborted queries) are not recorded. */
let service = 'svc';
let server: Server;
let address = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '', 'http://x');
    if (url.pathname.endsWith(`/${service}`)) asked.push(url.searchParams.get('index'));
    // Past the end of the script the last answer repeats, like an agent whose state stopped changing.
    const step = script.length > 1 ? script.shift()! : script[0]!;
    res.writeHead(step.status, step.index !== undefined ? { 'X-Consul-Index': String(step.index) } : {});
    res.end(typeof step.body === 'string' ? step.body : JSON.stringify(step.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const instance = (id: string): HealthEntry => ({
  Node: { Node: 'n1', Address: '127.0.0.1' },
  Service: { ID: id, Service: 'svc', Port: 9042 },
  Checks: [{ CheckID: `service:${id}`, Status: 'passing' }],
});

const discovery = () =>
  consulDiscovery(new ConsulClient({ address }), {
    health: 'all',
    readyOnWarning: false,
    watchWait: 1000,
    minWatchInterval: 0,
    checkTtl: 10_000,
    deregisterCriticalAfter: 60_000,
    backoff: { initialMs: 10, maxMs: 10 },
  });

/** Waits until the scripted agent has been asked `n` times (the watch loop runs on by itself). */
async function askedAtLeast(n: number): Promise<void> {
  for (let polls = 0; asked.length < n; polls++) {
    if (polls > 1000) throw new Error(`the watch asked ${asked.length} times, expected at least ${n}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function take(iterator: AsyncIterator<DiscoveryEvent>, n: number): Promise<DiscoveryEvent[]> {
  const out: DiscoveryEvent[] = [];
  while (out.length < n) {
    const r = await iterator.next();
    if (r.done) break;
    out.push(r.value);
  }
  return out;
}

describe('Consul discovery watch loop (scripted agent)', () => {
  test('failures are degraded with the last endpoints, then recovered and the diff; a backwards index is a new view', async () => {
    script = [
      { status: 200, index: 50, body: [instance('a'), instance('b')] },
      { status: 500, body: 'rpc error: no leader' },
      { status: 500, body: 'rpc error: no leader' },
      { status: 200, index: 4, body: [instance('b')] }, // the servers lost their state: index went back
      { status: 200, index: 4, body: [instance('b')] },
    ];
    asked.length = 0;
    const d = discovery();
    const watch = d.watch('svc')[Symbol.asyncIterator]();
    const events = await take(watch, 4);
    expect(events.map((e) => [e.type, e.endpoints.map((x) => x.id).join(',')])).toEqual([
      ['snapshot', 'a,b'],
      ['degraded', 'a,b'],
      ['recovered', 'a,b'],
      ['removed', 'b'],
    ]);
    // After errors the watch starts again without an index (the servers' index may now be below ours).
    expect(asked.slice(0, 4)).toEqual([null, '50', null, null]);
    await askedAtLeast(5);
    expect(asked[4]).toBe('4');
    await watch.return?.();
    await d.close();
  });

  test('an index of 0 is never waited on', async () => {
    script = [{ status: 200, index: 0, body: [] }];
    service = 'zero';
    asked.length = 0;
    const d = discovery();
    const watch = d.watch(service)[Symbol.asyncIterator]();
    await take(watch, 1);
    await askedAtLeast(3);
    expect([...new Set(asked.slice(1))]).toEqual(['1']);
    await watch.return?.();
    await d.close();
  });

  test('a permission error before the first snapshot fails the watch instead of waiting forever', async () => {
    script = [{ status: 403, body: `Permission denied: token with AccessorID 'x' lacks permission 'service:read' on "svc"` }];
    const d = discovery();
    const watch = d.watch('svc')[Symbol.asyncIterator]();
    await expect(watch.next()).rejects.toThrow(/service "svc" \{ policy = "read" \}/);
    await d.close();
  });

  test('an answer filtered by ACLs is an error, not a shorter list', async () => {
    server.removeAllListeners('request');
    server.on('request', (_req, res) =>
      res.writeHead(200, { 'X-Consul-Index': '9', 'X-Consul-Results-Filtered-By-ACLs': 'true' }).end('[]'),
    );
    const d = discovery();
    await expect(d.list('svc')).rejects.toThrow(/filtered the answer by ACLs/);
    await d.close();
  });
});
