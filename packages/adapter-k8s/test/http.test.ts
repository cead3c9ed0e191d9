// KubeClient's HTTP layer against a scripted loopback HTTPS server: paths and query, auth header,
// status mapping, watch streams (events, ERROR 410, a stream cut short), aborts and close().
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeServerCertificate } from '../../../scripts/testenv/certificates.mjs';
import { endpointSlices, isGone, KubeClient, leases } from '../src/client.js';
import { bearerTokenFile } from '../src/credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'muster-k8s-http-'));
// The CA that signed the server certificate: what the client trusts.
let cert: Buffer;

let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, res) => res.end();
const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
let server: Server;
let client: KubeClient;

beforeAll(async () => {
  const made = await makeServerCertificate(dir, { cn: '127.0.0.1', sans: ['IP:127.0.0.1'] });
  cert = readFileSync(made.caFile);
  server = createServer({ cert: readFileSync(made.certFile), key: readFileSync(made.keyFile) }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  client = new KubeClient(
    {
      server: new URL(`https://127.0.0.1:${port}`),
      namespace: 'ns-1',
      source: 'test',
      credentials: { tls: { ca: cert }, headers: async () => ({ Authorization: 'Bearer t0k' }), identity: 'tester' },
    },
    { requestTimeout: 1000 },
  );
});
afterAll(async () => {
  client.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const json = (status: number, body: unknown) => (_q: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('KubeClient over HTTPS', () => {
  test('get, list with a selector, create and replace send the right requests', async () => {
    handler = json(200, { metadata: { name: 'x', resourceVersion: '7' } });
    expect(await client.get(leases, 'x')).toMatchObject({ metadata: { resourceVersion: '7' } });
    handler = json(200, { items: [{ metadata: { name: 's' } }], metadata: { resourceVersion: '42' } });
    expect(await client.list(endpointSlices, { labelSelector: 'kubernetes.io/service-name=svc' })).toEqual({
      items: [{ metadata: { name: 's' } }],
      resourceVersion: '42',
    });
    handler = json(201, { metadata: { name: 'n' } });
    await client.create(leases, { metadata: { name: 'n' } });
    await client.replace(leases, { metadata: { name: 'n', resourceVersion: '3' } });
    expect(seen.slice(-4).map((r) => `${r.method} ${decodeURIComponent(r.url)}`)).toEqual([
      'GET /apis/coordination.k8s.io/v1/namespaces/ns-1/leases/x',
      'GET /apis/discovery.k8s.io/v1/namespaces/ns-1/endpointslices?labelSelector=kubernetes.io/service-name=svc',
      'POST /apis/coordination.k8s.io/v1/namespaces/ns-1/leases',
      'PUT /apis/coordination.k8s.io/v1/namespaces/ns-1/leases/n',
    ]);
    expect(seen.at(-1)!.auth).toBe('Bearer t0k');
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ metadata: { name: 'n', resourceVersion: '3' } });
  });

  test('404 on get is undefined; 409 and 403 are KubernetesErrors with status and reason', async () => {
    handler = json(404, { kind: 'Status', reason: 'NotFound', code: 404 });
    expect(await client.get(leases, 'missing')).toBeUndefined();
    await client.delete(leases, 'missing');
    handler = json(409, { kind: 'Status', reason: 'Conflict', code: 409, message: 'the object has been modified' });
    await expect(client.replace(leases, { metadata: { name: 'n' } })).rejects.toMatchObject({
      status: 409,
      reason: 'Conflict',
      verb: 'update',
    });
    handler = json(403, { kind: 'Status', reason: 'Forbidden', code: 403, message: 'nope' });
    await expect(client.list(endpointSlices)).rejects.toThrow(
      /list endpointslices\.discovery\.k8s\.io in namespace 'ns-1': forbidden by RBAC for tester .*rbac\.yaml/,
    );
  });

  test('a request without an answer times out with a clear message; an abort is an AbortError', async () => {
    handler = () => undefined; // never answers
    await expect(client.get(leases, 'slow')).rejects.toThrow(/no answer from https:\/\/127\.0\.0\.1:\d+ within 1000 ms/);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(client.get(leases, 'slow', { signal: controller.signal })).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
  });

  test('watch yields events with bookmarks asked for, then ends when the server ends it', async () => {
    handler = (_q, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '11' } } })}\n`);
      res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } })}\n{"type":"DELETED",`);
      setTimeout(() => res.end(`"object":{"metadata":{"name":"a","resourceVersion":"13"}}}\n`), 20);
    };
    const events = [];
    for await (const e of client.watch(endpointSlices, { resourceVersion: '10', timeoutSeconds: 5, labelSelector: 'a=b' }))
      events.push(`${e.type}@${e.object.metadata?.resourceVersion}`);
    expect(events).toEqual(['ADDED@11', 'BOOKMARK@12', 'DELETED@13']);
    const url = new URL(seen.at(-1)!.url, 'https://x');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      watch: '1',
      labelSelector: 'a=b',
      resourceVersion: '10',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '5',
    });
  });

  test('an ERROR event with 410 and an HTTP 410 are both Gone', async () => {
    handler = (_q, res) => {
      res.writeHead(200);
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' } })}\n`,
      );
    };
    const fromEvent = await client
      .watch(endpointSlices, { resourceVersion: '1', timeoutSeconds: 5 })
      .next()
      .catch((e: unknown) => e);
    expect(isGone(fromEvent)).toBe(true);
    handler = json(410, { kind: 'Status', code: 410, reason: 'Gone' });
    const fromStatus = await client
      .watch(endpointSlices, { resourceVersion: '1', timeoutSeconds: 5 })
      .next()
      .catch((e: unknown) => e);
    expect(isGone(fromStatus)).toBe(true);
  });

  test('a watch stream cut by the server is an error, not a normal end', async () => {
    handler = (req, res) => {
      res.writeHead(200);
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
      setTimeout(() => req.socket.destroy(), 20);
    };
    const events: string[] = [];
    const outcome = await (async () => {
      for await (const e of client.watch(endpointSlices, { resourceVersion: '1', timeoutSeconds: 5 })) events.push(e.type);
      return 'ended';
    })().catch((e: Error) => e.message);
    expect(events).toEqual(['ADDED']);
    expect(outcome).toMatch(
      /watch endpointslices\.discovery\.k8s\.io in namespace 'ns-1': the stream (broke|ended before the server finished it)/,
    );
  });

  test('a watch silent for longer than the idle timeout ends normally, so the caller re-watches', async () => {
    handler = (_q, res) => {
      res.writeHead(200);
      res.write('\n');
    };
    const quick = new KubeClient(
      {
        server: client.server,
        namespace: 'ns-1',
        source: 'test',
        credentials: { tls: { ca: cert }, headers: async () => ({}), identity: 'tester' },
      },
      { watchIdleTimeout: 200 },
    );
    const started = Date.now();
    const events = [];
    for await (const e of quick.watch(endpointSlices, { resourceVersion: '1', timeoutSeconds: 60 })) events.push(e);
    expect(events).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5000);
    quick.close();
  });

  test('aborting a watch ends it quietly', async () => {
    handler = (_q, res) => {
      res.writeHead(200);
      res.write('\n');
    };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const events = [];
    for await (const e of client.watch(endpointSlices, { resourceVersion: '1', timeoutSeconds: 5, signal: controller.signal }))
      events.push(e);
    expect(events).toEqual([]);
  });
});

describe('a token file rotated under a running client', () => {
  /** A client whose token file holds old-token for now. */
  const rotatingClient = (tokenPath: string) => {
    writeFileSync(tokenPath, 'old-token\n');
    return new KubeClient({
      server: client.server,
      namespace: 'ns-1',
      source: 'test',
      credentials: bearerTokenFile(tokenPath, { tls: { ca: cert }, identity: 'tester' }),
    });
  };

  test('a 401 re-reads the file and sends the call once more with the new token; an unchanged token fails once', async () => {
    const tokenPath = join(dir, 'token');
    const rotating = rotatingClient(tokenPath);
    const accepted = 'Bearer new-token';
    handler = (req, res) => json(req.headers.authorization === accepted ? 200 : 401, { metadata: { name: 'x' } })(req, res);
    await rotating.get(leases, 'x').catch(() => undefined); // reads and caches old-token
    writeFileSync(tokenPath, 'new-token\n'); // revoked old, issued new: within the minute the file is not looked at
    const before = seen.length;
    expect(await rotating.get(leases, 'x')).toMatchObject({ metadata: { name: 'x' } });
    expect(seen.slice(before).map((r) => r.auth)).toEqual(['Bearer old-token', accepted]);
    // Writes and watches take the same path.
    await rotating.replace(leases, { metadata: { name: 'x', resourceVersion: '1' } });
    expect(seen.at(-1)!.auth).toBe(accepted);
    // The server refuses the current token too: one retry at most, then the 401 error.
    handler = json(401, { kind: 'Status', code: 401, reason: 'Unauthorized' });
    const refused = seen.length;
    await expect(rotating.get(leases, 'x')).rejects.toThrow(/rejected the credentials \(401 Unauthorized\)/);
    expect(seen.length - refused).toBe(1);
    rotating.close();
  });

  test('a watch refused with 401 is opened again with the rotated token', async () => {
    const tokenPath = join(dir, 'watch-token');
    const rotating = rotatingClient(tokenPath);
    handler = json(401, {});
    await rotating.get(leases, 'x').catch(() => undefined);
    writeFileSync(tokenPath, 'new-token\n');
    handler = (req, res) => {
      if (req.headers.authorization !== 'Bearer new-token') return json(401, {})(req, res);
      res.writeHead(200);
      res.end(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
    };
    const events: string[] = [];
    for await (const e of rotating.watch(endpointSlices, { resourceVersion: '1', timeoutSeconds: 5 })) events.push(e.type);
    expect(events).toEqual(['ADDED']);
    rotating.close();
  });
});
