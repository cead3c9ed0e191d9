import { describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../src/client.js';
import { LeaseHeartbeatBackend, toRecord } from '../src/heartbeat.js';
import { leaseNamePattern } from '../src/lease-record.js';

const backend = () => new LeaseHeartbeatBackend({ client: {} as KubeClient });

describe('heartbeat Leases', () => {
  test('member ids become valid, distinct Lease names', () => {
    const b = backend();
    expect(b.leaseName('worker-1')).toBe('muster-hb-worker-1');
    const odd = ['Worker_1', 'worker 1', 'ünïcode', '...', 'x'.repeat(300)];
    const names = odd.map((id) => b.leaseName(id));
    for (const name of names) {
      expect(name).toMatch(leaseNamePattern);
      expect(name.length).toBeLessThanOrEqual(253);
    }
    expect(new Set(names).size).toBe(odd.length);
    expect(b.leaseName('Worker_1')).toMatch(/^muster-hb-worker-1-[0-9a-f]{12}$/);
  });

  test('a Lease reads back as a record; hand-edited or foreign Leases never throw', () => {
    const lease = {
      metadata: {
        name: 'muster-hb-w',
        resourceVersion: '12',
        labels: { 'muster.io/heartbeat-group': 'g' },
        annotations: {
          'muster.io/member-id': 'W',
          'muster.io/incarnation': 'i-1',
          'muster.io/payload': '{"load":1}',
          'muster.io/ttl-ms': '2500',
        },
      },
      spec: { holderIdentity: 'W', leaseDurationSeconds: 3, renewTime: '2026-12-02T10:00:00.000000Z' },
    };
    expect(toRecord(lease)).toEqual({
      memberId: 'W',
      group: 'g',
      payload: { load: 1 },
      ttl: 2500,
      incarnation: 'i-1',
      version: '12',
      renewedAt: Date.UTC(2026, 11, 2, 10),
    });
    const edited = { ...lease, metadata: { ...lease.metadata, annotations: { 'muster.io/payload': '{broken' } } };
    expect(toRecord(edited)).toMatchObject({ memberId: 'W', payload: null, ttl: 3000, incarnation: '' });
    expect(toRecord({ metadata: { name: 'kube-scheduler' }, spec: {} })).toBeUndefined();
  });

  test('groups must be label values', async () => {
    await expect(
      backend().write(
        { memberId: 'm', group: 'not a label!', payload: null, ttl: 1000, incarnation: 'i' },
        { signal: new AbortController().signal, takeover: true },
      ),
    ).rejects.toThrow(/heartbeat group 'not a label!' cannot be a Kubernetes label value/);
  });
});
