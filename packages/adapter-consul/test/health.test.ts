import { describe, expect, test } from '@jest/globals';
import { toEndpoints, toServiceDefinition, type HealthEntry } from '../src/health.js';

const node = { Node: 'n1', Address: '10.0.0.1', Datacenter: 'dc1' };
const entry = (id: string, statuses: string[], extra: Partial<HealthEntry['Service']> = {}, n = node): HealthEntry => ({
  Node: n,
  Service: { ID: id, Service: 'svc', Port: 9042, ...extra },
  Checks: statuses.map((Status, i) => ({ CheckID: i === 0 ? 'serfHealth' : `service:${id}`, Status })),
});

describe('health answers as endpoints', () => {
  test('ready only when every check passes; warning counts only when asked', () => {
    const entries = [entry('b', ['passing', 'passing']), entry('a', ['passing', 'critical']), entry('c', ['passing', 'warning'])];
    expect(toEndpoints(entries).map((e) => [e.id, e.ready])).toEqual([
      ['a', false],
      ['b', true],
      ['c', false],
    ]);
    expect(toEndpoints(entries, { readyOnWarning: true }).find((e) => e.id === 'c')?.ready).toBe(true);
  });

  test('service address falls back to the node address; tags, meta, ports, zone, dc map through', () => {
    const [withOwn, withNode] = toEndpoints([
      entry('x', ['passing'], {
        Address: '127.0.0.5',
        Tags: ['blue', 'canary'],
        Meta: { version: '1.2', 'port-admin': '8080', zone: 'z1' },
      }),
      entry('y', ['passing']),
    ]);
    expect(withOwn).toMatchObject({
      address: '127.0.0.5',
      ports: { admin: 8080 },
      zone: 'z1',
      dc: 'dc1',
      nodeName: 'n1',
      metadata: { version: '1.2', 'port-admin': '8080', zone: 'z1', tags: 'blue,canary' },
    });
    expect(withNode).toMatchObject({ address: '10.0.0.1', metadata: {} });
  });

  test('maintenance mode marks the endpoint terminating and not ready', () => {
    const e: HealthEntry = { ...entry('m', ['passing']), Checks: [{ CheckID: '_service_maintenance:m', Status: 'critical' }] };
    expect(toEndpoints([e])[0]).toMatchObject({ ready: false, terminating: true });
  });

  test('an id repeated on two nodes is qualified with the node, so neither hides the other', () => {
    const ids = toEndpoints([entry('dup', ['passing']), entry('dup', ['passing'], {}, { ...node, Node: 'n2' })]).map((e) => e.id);
    expect(ids).toEqual(['dup@n1', 'dup@n2']);
  });
});

describe('registration as a service definition', () => {
  test('carries a TTL check with DeregisterCriticalServiceAfter and named ports as meta', () => {
    const def = toServiceDefinition(
      { service: 'muster-proxy', id: 'p1', address: '127.0.0.1', port: 9042, ports: { admin: 8080 }, tags: ['t'], metadata: { v: '1' } },
      { checkTtl: 10_000, deregisterCriticalAfter: 60_000 },
    );
    expect(def).toMatchObject({
      ID: 'p1',
      Name: 'muster-proxy',
      Tags: ['t'],
      Meta: { v: '1', 'port-admin': '8080' },
      Check: { CheckID: 'service:p1', TTL: '10000ms', Status: 'passing', DeregisterCriticalServiceAfter: '60000ms' },
    });
  });

  test('refuses meta keys Consul would reject, naming the key', () => {
    expect(() =>
      toServiceDefinition(
        { service: 's', id: 'i', address: 'a', port: 1, metadata: { 'bad.key': 'x' } },
        { checkTtl: 1000, deregisterCriticalAfter: 60_000 },
      ),
    ).toThrow(/"bad.key"/);
  });
});
