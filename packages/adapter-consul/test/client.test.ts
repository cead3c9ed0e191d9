// The client's error mapping against a scripted loopback HTTP server (no Consul needed).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BackendError, MusterError } from '@muster/core';
import { ConsulClient, connectionFromEnv, missingRule } from '../src/client.js';

let server: Server;
let address = '';
let handler: (req: IncomingMessage, res: ServerResponse) => void = (_q, res) => res.end();
const seen: { url: string; token: string | undefined }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', token: req.headers['x-consul-token'] as string | undefined });
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
  handler = (_req, res) => {
    res.writeHead(status, headers);
    res.end(body);
  };
};

async function failure(promise: Promise<unknown>): Promise<BackendError> {
  try {
    await promise;
  } catch (error) {
    expect(MusterError.is(error, 'MUSTER_BACKEND')).toBe(true);
    return error as BackendError;
  }
  throw new Error('expected a failure');
}

describe('Consul client', () => {
  test('sends the token, datacenter and namespace; reads X-Consul-Index and the ACL-filtered flag', async () => {
    reply(200, '[1]', { 'X-Consul-Index': '42', 'X-Consul-Results-Filtered-By-ACLs': 'true' });
    const client = new ConsulClient({ address, token: 'secret', datacenter: 'dc9', namespace: 'team' });
    const res = await client.get<number[]>('/v1/health/service/x', { purpose: 'test', query: { passing: true } });
    client.close();
    expect(res).toEqual({ status: 200, body: [1], index: 42n, filteredByAcls: true });
    const last = seen.at(-1)!;
    expect(last.token).toBe('secret');
    expect(new URL(last.url, 'http://x').searchParams.get('dc')).toBe('dc9');
    expect(new URL(last.url, 'http://x').searchParams.get('ns')).toBe('team');
    expect(new URL(last.url, 'http://x').searchParams.has('passing')).toBe(true);
  });

  test('agent endpoints leave out the datacenter; blocking queries send index and wait', async () => {
    reply(200, 'true', { 'X-Consul-Index': '8' });
    const client = new ConsulClient({ address, datacenter: 'dc9' });
    await client.put('/v1/agent/check/pass/x', { purpose: 'test', local: true });
    expect(new URL(seen.at(-1)!.url, 'http://x').searchParams.has('dc')).toBe(false);
    await client.get('/v1/kv/k', { purpose: 'test', index: 7n, wait: 1500 });
    const params = new URL(seen.at(-1)!.url, 'http://x').searchParams;
    expect([params.get('index'), params.get('wait')]).toEqual(['7', '1500ms']);
    client.close();
  });

  test('403 names the missing rule from Consul’s message, and says when no token was given', async () => {
    reply(403, `Permission denied: anonymous token lacks permission 'key:write' on "muster/locks/a"`);
    const client = new ConsulClient({ address });
    const err = await failure(client.put('/v1/kv/muster/locks/a', { purpose: 'acquire lock key muster/locks/a' }));
    client.close();
    expect(err.status).toBe(403);
    expect(err.message).toContain('key "muster/locks/a" { policy = "write" }');
    expect(err.message).toContain('no token was given');
    expect(err.message).toContain('deploy/consul/policy.hcl');
  });

  test('403 ACL not found says the token is unknown', async () => {
    reply(403, 'ACL not found');
    const client = new ConsulClient({ address, token: 'nope' });
    const err = await failure(client.get('/v1/kv/x', { purpose: 'read' }));
    client.close();
    expect(err.message).toMatch(/does not know the ACL token/);
  });

  test('an unknown datacenter is named with the known ones and is not transient; a known but unreachable one is', async () => {
    handler = (req, res) => {
      if (req.url?.startsWith('/v1/catalog/datacenters')) res.end('["dc1","dc2"]');
      else res.writeHead(500).end('No path to datacenter');
    };
    const mars = new ConsulClient({ address, datacenter: 'mars' });
    const err = await failure(mars.get('/v1/health/service/x', { purpose: 'read' }));
    mars.close();
    expect(err.message).toMatch(/datacenter 'mars' is unknown .* \(it knows dc1, dc2\)/);
    expect(err.status).toBe(400);
    const dc2 = new ConsulClient({ address, datacenter: 'dc2' });
    const wan = await failure(dc2.get('/v1/health/service/x', { purpose: 'read' }));
    dc2.close();
    expect(wan.message).toMatch(/servers of datacenter 'dc2' cannot be reached/);
    expect(wan.status).toBe(500);
  });

  test('an unreachable agent is named with its address and is transient (no status)', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const client = new ConsulClient({ address: `127.0.0.1:${port}` });
    const err = await failure(client.get('/v1/kv/x', { purpose: 'read key x' }));
    client.close();
    expect(err.status).toBeUndefined();
    expect(err.message).toContain(`cannot reach the Consul agent at 127.0.0.1:${port}`);
    expect(err.message).toContain('ECONNREFUSED');
  });

  test('an aborted call rejects with MUSTER_ABORTED', async () => {
    handler = () => undefined; // never answers
    const client = new ConsulClient({ address });
    const controller = new AbortController();
    const pending = client.get('/v1/kv/x', { purpose: 'read', signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ code: 'MUSTER_ABORTED' });
    client.close();
  });

  test('missingRule and env', () => {
    expect(missingRule(`token with AccessorID 'x' lacks permission 'service:write' on "muster-p"`)).toBe(
      'service "muster-p" { policy = "write" }',
    );
    expect(missingRule('something else')).toBeUndefined();
    expect(connectionFromEnv({ CONSUL_HTTP_ADDR: '10.0.0.1:8501', CONSUL_HTTP_SSL: 'true', CONSUL_HTTP_TOKEN: 't' })).toEqual({
      address: 'https://10.0.0.1:8501',
      token: 't',
    });
  });
});
