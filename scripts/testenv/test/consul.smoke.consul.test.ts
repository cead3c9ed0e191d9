// Smoke test for the real Consul dev agents from `npm run testenv -- up consul consul-acl`: a
// service with a passing TTL check registered through the `consul` client shows up as healthy, and
// with ACLs on an anonymous registration is denied while the management token is allowed.
import { describe, it, expect } from '@jest/globals';
import Consul from 'consul';
import { testServer } from '../state.mjs';

interface ConsulEntry {
  address: string;
  url: string;
  datacenter: string;
  version: string;
  managementToken?: string;
}

interface HealthEntry {
  Service: { ID: string; Service: string };
  Checks: { CheckID: string; Status: string; ServiceID: string }[];
}

const suffix = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;

function client(entry: ConsulEntry, token?: string): Consul {
  const port = Number(new URL(entry.url).port);
  return new Consul({ host: '127.0.0.1', port, defaults: token ? { token } : {} });
}

async function passingInstances(entry: ConsulEntry, service: string, token?: string): Promise<HealthEntry[]> {
  const res = await fetch(`${entry.url}/v1/health/service/${encodeURIComponent(service)}?passing`, {
    headers: token ? { 'X-Consul-Token': token } : {},
  });
  expect(res.status).toBe(200);
  return (await res.json()) as HealthEntry[];
}

async function registerAndCheck(entry: ConsulEntry, token?: string): Promise<void> {
  const consul = client(entry, token);
  const service = `muster-smoke-${suffix}`;
  const id = `${service}-1`;
  await consul.agent.service.register({
    name: service,
    id,
    port: 4711,
    address: '127.0.0.1',
    tags: ['smoke'],
    // consul@2.0.1's types require `timeout`; for a TTL check the client does not send it.
    check: { name: 'ttl', ttl: '30s', status: 'passing', timeout: '5s' },
  });
  try {
    const instances = await passingInstances(entry, service, token);
    expect(instances.map((i) => i.Service.ID)).toEqual([id]);
    expect(instances[0]!.Checks.some((c) => c.ServiceID === id && c.Status === 'passing')).toBe(true);

    // Renewing the TTL goes through the agent's check endpoint; the instance stays passing.
    await consul.agent.check.pass({ id: `service:${id}`, note: 'renewed' });
    expect((await passingInstances(entry, service, token)).length).toBe(1);
  } finally {
    await consul.agent.service.deregister({ id });
  }
  expect(await passingInstances(entry, service, token)).toEqual([]);
}

const plain = testServer<ConsulEntry>('consul');
(plain ? describe : describe.skip)('consul test server (smoke)', () => {
  it('is a leader-elected agent of the expected version', async () => {
    const self = (await (await fetch(`${plain!.url}/v1/agent/self`)).json()) as {
      Config: { Version: string; Datacenter: string };
    };
    expect(self.Config.Version).toBe(plain!.version);
    expect(self.Config.Datacenter).toBe(plain!.datacenter);
    expect(await client(plain!).status.leader()).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it('registers a service with a passing TTL check, reads it back as passing, deregisters it', async () => {
    await registerAndCheck(plain!);
  });
});

const acl = testServer<ConsulEntry>('consul-acl');
(acl ? describe : describe.skip)('consul-acl test server (smoke)', () => {
  it('denies an anonymous registration with 403', async () => {
    const res = await fetch(`${acl!.url}/v1/agent/service/register`, {
      method: 'PUT',
      body: JSON.stringify({ Name: `muster-anon-${suffix}` }),
    });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/Permission denied/i);
  });

  it('denies the anonymous registration through the client too', async () => {
    const err = await client(acl!)
      .agent.service.register({ name: `muster-anon-${suffix}` })
      .then(
        () => undefined,
        (e: unknown) => e as { response?: { statusCode?: number } },
      );
    expect(err?.response?.statusCode).toBe(403);
  });

  it('lets the management token register, read health and deregister', async () => {
    expect(acl!.managementToken).toMatch(/^[0-9a-f-]{36}$/);
    await registerAndCheck(acl!, acl!.managementToken);
  });

  it('hides the catalog from anonymous reads (default deny)', async () => {
    const res = await fetch(`${acl!.url}/v1/catalog/services`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
  });
});
