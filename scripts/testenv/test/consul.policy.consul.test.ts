// Checks deploy/consul/policy.hcl against the real ACL-enabled agent (`npm run testenv -- up
// consul-acl`): a token with only that policy can do what the Muster adapter does, and no more.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { testServer } from '../state.mjs';

interface ConsulEntry {
  url: string;
  managementToken: string;
}

const entry = testServer<ConsulEntry>('consul-acl');
const suffix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
const service = `muster-policy-${suffix}`;
const serviceId = `${service}-1`;
const foreign = `other-policy-${suffix}`;

async function call(method: string, path: string, token: string | undefined, body?: unknown) {
  const res = await fetch(`${entry!.url}${path}`, {
    method,
    headers: token ? { 'X-Consul-Token': token } : {},
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

async function ok(method: string, path: string, token: string | undefined, body?: unknown) {
  const r = await call(method, path, token, body);
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r.json;
}

(entry ? describe : describe.skip)('deploy/consul/policy.hcl on consul-acl', () => {
  const admin = entry?.managementToken;
  let policyId = '';
  let tokenId = '';
  let token = '';

  beforeAll(async () => {
    const rules = readFileSync(new URL('../../../deploy/consul/policy.hcl', import.meta.url), 'utf8');
    const policy = (await ok('PUT', '/v1/acl/policy', admin, { Name: `muster-adapter-${suffix}`, Rules: rules })) as {
      ID: string;
    };
    policyId = policy.ID;
    const created = (await ok('PUT', '/v1/acl/token', admin, {
      Description: 'muster adapter (policy test)',
      Policies: [{ ID: policyId }],
    })) as { AccessorID: string; SecretID: string };
    tokenId = created.AccessorID;
    token = created.SecretID;
    // Something the adapter did not register, to read the health of and to be denied writing.
    await ok('PUT', '/v1/agent/service/register', admin, {
      Name: foreign,
      ID: foreign,
      Check: { TTL: '30s', Status: 'passing' },
    });
    await ok('PUT', '/v1/kv/other/policy-test', admin, 'x');
  });

  afterAll(async () => {
    if (!admin) return;
    await call('PUT', `/v1/agent/service/deregister/${serviceId}`, admin);
    await call('PUT', `/v1/agent/service/deregister/${foreign}`, admin);
    await call('DELETE', '/v1/kv/other/policy-test', admin);
    await call('DELETE', '/v1/kv/muster/?recurse', admin);
    if (tokenId) await call('DELETE', `/v1/acl/token/${tokenId}`, admin);
    if (policyId) await call('DELETE', `/v1/acl/policy/${policyId}`, admin);
  });

  it('registers a muster-* service with a TTL check, renews the check, reads health, deregisters', async () => {
    await ok('PUT', '/v1/agent/service/register', token, {
      Name: service,
      ID: serviceId,
      Port: 4712,
      Check: { Name: 'ttl', TTL: '30s', Status: 'critical' },
    });
    await ok('PUT', `/v1/agent/check/pass/service:${serviceId}?note=alive`, token);
    const mine = (await ok('GET', `/v1/health/service/${service}?passing`, token)) as { Service: { ID: string } }[];
    expect(mine.map((i) => i.Service.ID)).toEqual([serviceId]);
    const theirs = (await ok('GET', `/v1/health/service/${foreign}?passing`, token)) as unknown[];
    expect(theirs).toHaveLength(1);
    await ok('PUT', `/v1/agent/service/deregister/${serviceId}`, token);
    expect(await ok('GET', `/v1/health/service/${service}`, token)).toEqual([]);
  });

  it('creates, renews and destroys a session and holds a lock under muster/', async () => {
    const { ID: session } = (await ok('PUT', '/v1/session/create', token, {
      Name: `muster-policy-${suffix}`,
      TTL: '10s',
      LockDelay: '0s',
      Behavior: 'delete',
    })) as { ID: string };
    await ok('PUT', `/v1/session/renew/${session}`, token);
    expect(await ok('PUT', `/v1/kv/muster/${suffix}/leader?acquire=${session}`, token, 'me')).toBe(true);
    const [kv] = (await ok('GET', `/v1/kv/muster/${suffix}/leader`, token)) as { Session?: string }[];
    expect(kv?.Session).toBe(session);
    expect(await ok('PUT', `/v1/kv/muster/${suffix}/leader?release=${session}`, token, 'me')).toBe(true);
    await ok('PUT', `/v1/session/destroy/${session}`, token);
    expect(await ok('DELETE', `/v1/kv/muster/${suffix}/leader`, token)).toBe(true);
  });

  it('reads and writes keys under muster/', async () => {
    expect(await ok('PUT', `/v1/kv/muster/${suffix}/config`, token, '{"a":1}')).toBe(true);
    const [kv] = (await ok('GET', `/v1/kv/muster/${suffix}/config`, token)) as { Value: string }[];
    expect(Buffer.from(kv!.Value, 'base64').toString()).toBe(JSON.stringify({ a: 1 }));
    expect(await ok('GET', `/v1/kv/muster/${suffix}/?keys`, token)).toEqual([`muster/${suffix}/config`]);
    expect(await ok('DELETE', `/v1/kv/muster/${suffix}/config`, token)).toBe(true);
  });

  it('denies everything else', async () => {
    const denied: [string, string, unknown?][] = [
      ['PUT', '/v1/agent/service/register', { Name: `other-${suffix}` }],
      ['PUT', `/v1/agent/service/deregister/${foreign}`],
      ['PUT', `/v1/agent/check/fail/service:${foreign}`],
      ['PUT', '/v1/kv/other/policy-test', 'y'],
      ['PUT', `/v1/kv/muster-${suffix}`, 'y'],
      ['GET', '/v1/kv/other/policy-test'],
      ['GET', '/v1/acl/tokens'],
      ['PUT', '/v1/acl/policy', { Name: `x-${suffix}`, Rules: 'key_prefix "" { policy = "write" }' }],
      ['GET', '/v1/agent/self'],
      ['PUT', '/v1/catalog/register', { Node: `fake-${suffix}`, Address: '127.0.0.1' }],
    ];
    for (const [method, path, body] of denied) {
      const r = await call(method, path, token, body);
      expect(`${method} ${path} -> ${r.status}`).toBe(`${method} ${path} -> 403`);
    }
  });
});
