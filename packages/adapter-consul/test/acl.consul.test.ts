// The ACL profile (`npm run testenv -- up consul-acl`, default deny): a token holding only
// deploy/consul/policy.hcl runs all three ports; without a token, or outside the policy, the
// errors say which rule is missing.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createMuster, type Muster } from '@muster/core';
import { eventually, nextMatching, nextWithin, uniqueName } from '@muster/core/testing';
import { testServer } from '../../../scripts/testenv/state.mjs';

/** The error a call fails with; a call that succeeds fails the test. */
async function failure(call: Promise<unknown>): Promise<Error & { status?: number }> {
  try {
    await call;
  } catch (error) {
    return error as Error & { status?: number };
  }
  throw new Error('expected the call to fail');
}

interface ConsulEntry {
  address: string;
  url: string;
  managementToken: string;
}

const entry = testServer<ConsulEntry>('consul-acl');
const musters: Muster[] = [];
let token = '';
let cleanup: (() => Promise<void>) | undefined;

async function admin(method: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${entry!.url}${path}`, {
    method,
    headers: { 'X-Consul-Token': entry!.managementToken },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  const text = await res.text();
  return text ? JSON.parse(text) : undefined;
}

async function muster(config: Record<string, unknown>): Promise<Muster> {
  const m = await createMuster(config);
  musters.push(m);
  return m;
}

const base = () => ({ address: entry!.address, minSessionTtl: '1s', lockDelay: '0s', watchWait: '10s', checkTtl: '1500ms' });

(entry ? describe : describe.skip)('Consul ACLs (consul-acl, default deny)', () => {
  beforeAll(async () => {
    const suffix = uniqueName('acl');
    const rules = readFileSync(new URL('../../../deploy/consul/policy.hcl', import.meta.url), 'utf8');
    const policy = (await admin('PUT', '/v1/acl/policy', { Name: `muster-adapter-${suffix}`, Rules: rules })) as { ID: string };
    const created = (await admin('PUT', '/v1/acl/token', { Description: 'adapter-consul ACL test', Policies: [{ ID: policy.ID }] })) as {
      AccessorID: string;
      SecretID: string;
    };
    token = created.SecretID;
    cleanup = async () => {
      await admin('DELETE', `/v1/acl/token/${created.AccessorID}`);
      await admin('DELETE', `/v1/acl/policy/${policy.ID}`);
    };
  });

  afterAll(async () => {
    await Promise.allSettled(musters.map((m) => m.close()));
    await cleanup?.();
  });

  test('a token with only the minimal policy locks, beats, registers, lists and watches', async () => {
    const m = await muster({
      lock: { adapter: 'consul', options: { ...base(), token } },
      heartbeat: { adapter: 'consul', options: { ...base(), token } },
      discovery: { adapter: 'consul', options: { ...base(), token } },
    });
    const lease = await m.lock.acquire(uniqueName('acl-lock'), { ttl: 2000 });
    await new Promise((r) => setTimeout(r, 1500)); // one background renewal at ttl/3
    expect(lease.onLost.aborted).toBe(false);
    await lease.release();

    const group = uniqueName('acl-group');
    const watch = m.heartbeat.watch(group)[Symbol.asyncIterator]();
    await nextWithin(watch, 5000, 'heartbeat snapshot');
    await m.heartbeat.beat('acl-member', { ok: true }, { ttl: 5000, group });
    await nextMatching(watch, (e) => e.type === 'joined', 5000, 'joined');
    await watch.return?.();
    await m.heartbeat.remove('acl-member');

    const service = uniqueName('muster-acl');
    await m.discovery.register({ service, id: `${service}-1`, address: '127.0.0.1', port: 9042 });
    const seen = m.discovery.watch(service)[Symbol.asyncIterator]();
    const snapshot = await nextWithin(seen, 5000, 'discovery snapshot');
    expect(snapshot.endpoints.map((e) => [e.id, e.ready])).toEqual([[`${service}-1`, true]]);
    await seen.return?.();
    await m.discovery.deregister();
    await eventually('the service to be gone', async () => ((await m.discovery.list(service)).length === 0 ? true : undefined), 5000);
  }, 30_000);

  test('without a token the lock and the registration fail naming the rule and the missing token', async () => {
    const m = await muster({
      lock: { adapter: 'consul', options: base() },
      discovery: { adapter: 'consul', options: base() },
    });
    const lockError = await failure(m.lock.acquire(uniqueName('anon'), { ttl: 2000 }));
    expect(lockError).toMatchObject({ code: 'MUSTER_BACKEND', status: 403 });
    expect(lockError.message).toMatch(/no token was given/);
    expect(lockError.message).toMatch(/its policy needs: session "[^"]+" \{ policy = "write" \}/);

    const service = uniqueName('muster-anon');
    const regError = await failure(m.discovery.register({ service, id: service, address: '127.0.0.1', port: 1 }));
    expect(regError.message).toMatch(new RegExp(`its policy needs: service "${service}" \\{ policy = "write" \\}`));
  });

  test('outside the policy (a service not named muster-*, a key outside muster/) the error names the rule', async () => {
    const m = await muster({
      discovery: { adapter: 'consul', options: { ...base(), token } },
      lock: { adapter: 'consul', options: { ...base(), token, keyPrefix: 'elsewhere/' } },
    });
    const service = uniqueName('other');
    const regError = await failure(m.discovery.register({ service, id: service, address: '127.0.0.1', port: 1 }));
    expect(regError.message).toMatch(new RegExp(`service "${service}" \\{ policy = "write" \\}`));
    const lockError = await failure(m.lock.acquire('x', { ttl: 2000 }));
    // The first key the lock touches is its fencing token key (read, then written with the lock key).
    expect(lockError.message).toMatch(/key "elsewhere\/(locks|fencing)\/x" \{ policy = "(read|write)" \}|key_prefix "elsewhere\/"/);
    expect(lockError.message).toMatch(/deploy\/consul\/policy\.hcl/);
  });

  test('an unknown token is reported as such', async () => {
    const m = await muster({ lock: { adapter: 'consul', options: { ...base(), token: '00000000-0000-4000-8000-000000000000' } } });
    await expect(m.lock.acquire('x', { ttl: 2000 })).rejects.toThrow(/does not know the ACL token/);
  });
});
