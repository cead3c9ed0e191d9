// Lock backend call order, tokens and error mapping against a scripted loopback server (no Consul
// needed), and the ttl the adapter asks Consul for.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMuster } from '@muster/core';
import { ConsulClient } from '../src/client.js';
import { ConsulLockBackend } from '../src/lock.js';

interface TxnOp {
  KV: { Verb: string; Key: string; Value?: string; Index?: number };
}

let server: Server;
let address = '';
const calls: string[] = [];
const sessionBodies: { TTL?: string }[] = [];
const txns: TxnOp[][] = [];
let sessionSerial = 0;
/** The token key as the scripted agent stores it (value base64), or undefined for none. */
let fence: { Value: string; ModifyIndex: number } | undefined;
/** The scripted answer to an acquire transaction; a grant echoes the keys it was asked for. */
let txnAnswer: (ops: TxnOp[]) => { status: number; body: unknown };
const granted = (ops: TxnOp[]) => ({
  status: 200,
  body: { Results: ops.filter((o) => o.KV.Verb !== 'check-not-exists').map((o) => ({ KV: { Key: o.KV.Key } })) },
});
const held = (ops: TxnOp[]) => {
  const lock = ops.findIndex((o) => o.KV.Verb === 'lock');
  return { status: 409, body: { Errors: [{ OpIndex: lock, What: `failed to lock key "${ops[lock]!.KV.Key}", lock is already held` }] } };
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      if (path === '/v1/txn') {
        const ops = JSON.parse(body) as TxnOp[];
        txns.push(ops);
        calls.push(`${req.method} ${path} ${ops.map((o) => o.KV.Verb).join(',')}`);
      } else {
        calls.push(`${req.method} ${path.replace(/\/s-\d+$/, '/s')}`);
      }
      if (path === '/v1/session/create') {
        sessionBodies.push(JSON.parse(body) as { TTL?: string });
        return res.end(JSON.stringify({ ID: `s-${++sessionSerial}` }));
      }
      if (path.startsWith('/v1/kv/muster/fencing/')) {
        if (!fence) return res.writeHead(404).end();
        return res.end(JSON.stringify([{ Key: path.slice(7), ...fence }]));
      }
      if (path.startsWith('/v1/kv/muster/locks/')) {
        // Held by someone else, at index 5; a blocking query on it answers at once here.
        return res
          .writeHead(200, { 'X-Consul-Index': '5' })
          .end(JSON.stringify([{ Key: path.slice(7), Session: 'other', ModifyIndex: 5 }]));
      }
      if (path === '/v1/txn') {
        const answer = txnAnswer(JSON.parse(body) as TxnOp[]);
        return res.writeHead(answer.status).end(JSON.stringify(answer.body));
      }
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

const backend = (wallClock = () => 1_700_000_000_000) =>
  new ConsulLockBackend(new ConsulClient({ address }), { keyPrefix: 'muster/', behavior: 'release', lockDelay: 15_000, wallClock });
const signal = () => AbortSignal.timeout(5000);
const base64 = (text: string) => Buffer.from(text).toString('base64');
const reset = () => {
  calls.length = 0;
  txns.length = 0;
  sessionBodies.length = 0;
  fence = undefined;
};

describe('Consul lock backend (scripted agent)', () => {
  test('one transaction checks the token key, writes the next token and takes the lock; release unlocks before destroying the session', async () => {
    reset();
    txnAnswer = granted;
    const b = backend();
    const grant = await b.tryAcquire('a', { ttl: 10_000, signal: signal() });
    // No token key yet: the acquirer's wall clock in µs.
    expect(grant?.token).toBe(1_700_000_000_000_000n);
    expect(txns[0]!.map((o) => [o.KV.Verb, o.KV.Key])).toEqual([
      ['check-not-exists', 'muster/fencing/a'],
      ['set', 'muster/fencing/a'],
      ['lock', 'muster/locks/a'],
    ]);
    expect(txns[0]![1]!.KV.Value).toBe(base64('1700000000000000'));
    await b.release('a', grant!, { signal: signal() });
    // Destroying first would free the key through invalidation, which arms lock-delay for the next holder.
    expect(calls).toEqual([
      'PUT /v1/session/create',
      'GET /v1/kv/muster/fencing/a',
      'PUT /v1/txn check-not-exists,set,lock',
      'PUT /v1/txn unlock',
      'PUT /v1/session/destroy/s',
    ]);
    await b.close();
  });

  test('a stored token above the wall clock is counted on from, under a check of the index it was read at', async () => {
    reset();
    txnAnswer = granted;
    fence = { Value: base64('1800000000000000'), ModifyIndex: 41 };
    const b = backend();
    const grant = await b.tryAcquire('c', { ttl: 10_000, signal: signal() });
    expect(grant?.token).toBe(1_800_000_000_000_001n);
    expect(txns[0]![0]!.KV).toEqual({ Verb: 'check-index', Key: 'muster/fencing/c', Index: 41 });
    await b.close();
  });

  test('a token key changed since it was read (another contender won) is a refused attempt, not an error', async () => {
    reset();
    fence = { Value: base64('5'), ModifyIndex: 41 };
    txnAnswer = () => ({ status: 409, body: { Errors: [{ OpIndex: 0, What: 'current modify index 42 != 41' }] } });
    const b = backend();
    expect(await b.tryAcquire('d', { ttl: 10_000, signal: signal() })).toBeUndefined();
    await b.close();
  });

  test('a waiting contender renews its spare session in every attempt, before the lock transaction', async () => {
    // A spare reused unrenewed would be reaped by Consul (2×TTL after its last renewal) under a late winner.
    reset();
    txnAnswer = held;
    const b = backend();
    for (let i = 0; i < 3; i++) expect(await b.tryAcquire('b', { ttl: 10_000, signal: signal() })).toBeUndefined();
    expect(calls).toEqual([
      'PUT /v1/session/create',
      'GET /v1/kv/muster/fencing/b',
      'PUT /v1/txn check-not-exists,set,lock',
      'PUT /v1/session/renew/s',
      'GET /v1/kv/muster/fencing/b',
      'PUT /v1/txn check-not-exists,set,lock',
      'PUT /v1/session/renew/s',
      'GET /v1/kv/muster/fencing/b',
      'PUT /v1/txn check-not-exists,set,lock',
    ]);
    await b.close();
    expect(calls.at(-1)).toBe('PUT /v1/session/destroy/s');
  });

  test('a permission denial inside the transaction (409 from Consul) is reported as 403 with the rule', async () => {
    reset();
    txnAnswer = () => ({
      status: 409,
      body: {
        Errors: [{ OpIndex: 2, What: `Permission denied: token with AccessorID 'x' lacks permission 'key:write' on "muster/locks/c"` }],
      },
    });
    const b = backend();
    await expect(b.tryAcquire('c', { ttl: 10_000, signal: signal() })).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining('key "muster/locks/c" { policy = "write" }'),
    });
    await b.close();
  });

  test('the session TTL is the ttl asked for, not rounded (4000 ms, and a 10 s default)', async () => {
    reset();
    txnAnswer = held; // only the sessions matter here
    const muster = await createMuster({ lock: { adapter: 'consul', options: { address, minSessionTtl: '1s', ttl: '10s' } } });
    try {
      expect(await muster.lock.tryAcquire('t', { ttl: 4000 })).toBeUndefined();
      expect(await muster.lock.tryAcquire('u')).toBeUndefined();
      expect(sessionBodies.map((b) => b.TTL)).toEqual(['4000ms', '10000ms']);
    } finally {
      await muster.close();
    }
  });

  test('waiting is measured on the injected clock, not Date.now()', async () => {
    reset();
    // A clock that moves 10 minutes per reading: the wait is used up after the first read of the
    // key, so no blocking query follows (with Date.now() a 60 s blocking query would).
    let now = 0;
    const clock = { now: () => (now += 600_000) };
    const b = new ConsulLockBackend(new ConsulClient({ address }), { keyPrefix: 'muster/', behavior: 'release', lockDelay: 0, clock });
    await b.waitForChange('w', { signal: signal(), maxWaitMs: 60_000 });
    expect(calls).toEqual(['GET /v1/kv/muster/locks/w']);
    await b.close();
  });

  test('a token key that does not hold a token (an operator write) is ignored: the clock floor orders the next one', async () => {
    reset();
    txnAnswer = granted;
    fence = { Value: base64('{"oops": true}'), ModifyIndex: 7 };
    const b = backend(() => 2);
    expect((await b.tryAcquire('g', { ttl: 10_000, signal: signal() }))?.token).toBe(2000n);
    expect(txns[0]![0]!.KV).toEqual({ Verb: 'check-index', Key: 'muster/fencing/g', Index: 7 });
    await b.close();
  });
});
