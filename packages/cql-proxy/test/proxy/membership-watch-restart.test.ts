// A membership watch that fails for good (an error retrying cannot fix, before its first view: an
// RBAC rule or ACL token not in place yet) is started again, reported each time, so the proxy
// follows membership once an operator fixes it, instead of only at the periodic reconcile.
import { describe, expect, it } from '@jest/globals';
import { BackendError, loadConfig, type Discovery, type DiscoveryEvent, type Endpoint } from '@muster/core';
import { EventChannel } from '@muster/core/adapter';
import { eventually } from '@muster/core/testing';
import { readProxyConfig } from '../../src/config.js';
import { MembershipService } from '../../src/proxy/membership-service.js';

const member = (id: string, n: number): Endpoint => ({ id, address: `10.0.0.${n}`, port: 9042, ready: true, metadata: {} });

describe('MembershipService', () => {
  it('starts a discovery watch again after it failed for good, and reports each failure', async () => {
    const config = readProxyConfig(await loadConfig({ proxy: { backend: { contactPoints: ['127.0.0.1'] } } }), 'p0', {});
    let watches = 0;
    const errors: unknown[] = [];
    const discovery = {
      self: undefined,
      list: async () => [member('p0', 1)],
      watch: (_service: string, options?: { signal?: AbortSignal }) => {
        const channel = new EventChannel<DiscoveryEvent>(() => undefined, options?.signal);
        if (++watches < 3) channel.fail(new BackendError('scripted', 'forbidden (403)', { status: 403 }));
        else channel.push({ type: 'snapshot', endpoints: [member('p0', 1), member('p1', 2)] });
        return channel;
      },
      register: async () => undefined,
      deregister: async () => undefined,
      close: async () => undefined,
    } as unknown as Discovery;
    const service = new MembershipService({
      config,
      discovery,
      heartbeat: undefined,
      self: () => ({ id: 'p0', nativePort: 9042 }),
      membership: { clusterName: 'c', defaultDc: 'dc1', requireHeartbeat: false },
      dataCenters: () => ['dc1'],
      payload: () => ({}),
      onChange: () => undefined,
      onError: (error) => errors.push(error),
    });
    await service.start();
    await eventually('the third watch to list p1', async () => service.view?.peers.some((m) => m.id === 'p1') || undefined, 20_000);
    expect(watches).toBe(3);
    expect(errors).toHaveLength(2);
    await service.close();
  }, 30_000);
});
