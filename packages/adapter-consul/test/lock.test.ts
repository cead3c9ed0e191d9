// Lock backend call order and error mapping against a scripted loopback server (no Consul needed).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConsulClient } from '../src/client.js';
import { ConsulLockBackend } from '../src/lock.js';

let server: Server;
let address = '';
const calls: string[] = [];
let txnAnswer: { status: number; body: unknown } = {
  status: 200,
  body: { Results: [{ KV: { Key: 'k', ModifyIndex: 77, LockIndex: 1 } }] },
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      calls.push(
        `${req.method} ${path}${path === '/v1/txn' ? ` ${(JSON.parse(body) as { KV: { Verb: string } }[]).map((o) => o.KV.Verb).join(',')}` : ''}`,
      );
      if (path === '/v1/session/create') return res.end('{"ID":"s-1"}');
      if (path === '/v1/txn') return res.writeHead(txnAnswer.status).end(JSON.stringify(txnAnswer.body));
      res.end('true');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const backend = () =>
  new ConsulLockBackend(new ConsulClient({ address }), { keyPrefix: 'muster/', behavior: 'release', lockDelay: 15_000 });
const signal = () => AbortSignal.timeout(5000);

describe('Consul lock backend (scripted agent)', () => {
  test('the token is the ModifyIndex the lock transaction answers with; release unlocks before destroying the session', async () => {
    calls.length = 0;
    const b = backend();
    const grant = await b.tryAcquire('a', { ttl: 10_000, signal: signal() });
    expect(grant?.token).toBe(77n);
    await b.release('a', grant!, { signal: signal() });
    // Destroying first would free the key through invalidation, which arms lock-delay for the next holder.
    expect(calls).toEqual(['PUT /v1/session/create', 'PUT /v1/txn lock', 'PUT /v1/txn unlock', 'PUT /v1/session/destroy/s-1']);
    await b.close();
  });

  test('a held lock keeps the session for the next attempt instead of creating one per attempt', async () => {
    calls.length = 0;
    txnAnswer = { status: 409, body: { Errors: [{ OpIndex: 0, What: 'failed to lock key "muster/locks/b", lock is already held' }] } };
    const b = backend();
    expect(await b.tryAcquire('b', { ttl: 10_000, signal: signal() })).toBeUndefined();
    expect(await b.tryAcquire('b', { ttl: 10_000, signal: signal() })).toBeUndefined();
    expect(calls.filter((c) => c.includes('session/create'))).toHaveLength(1);
    await b.close();
    expect(calls.at(-1)).toBe('PUT /v1/session/destroy/s-1');
  });

  test('a permission denial inside the transaction (409 from Consul) is reported as 403 with the rule', async () => {
    txnAnswer = {
      status: 409,
      body: {
        Errors: [{ OpIndex: 0, What: `Permission denied: token with AccessorID 'x' lacks permission 'key:write' on "muster/locks/c"` }],
      },
    };
    const b = backend();
    await expect(b.tryAcquire('c', { ttl: 10_000, signal: signal() })).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining('key "muster/locks/c" { policy = "write" }'),
    });
    await b.close();
  });
});
