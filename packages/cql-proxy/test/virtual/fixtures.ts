import type { Endpoint, MemberHeartbeat } from '@muster/core';
import type { MembershipOptions } from '../../src/virtual/membership.js';

export const endpoint = (id: string, address: string, extra: Partial<Endpoint> = {}): Endpoint => ({
  id,
  address,
  port: 9042,
  ready: true,
  metadata: {},
  ...extra,
});

export const heartbeat = (memberId: string, extra: Partial<MemberHeartbeat> = {}): MemberHeartbeat => ({
  memberId,
  group: 'proxies',
  payload: {},
  lastSeen: 1_000,
  ttl: 10_000,
  alive: true,
  incarnation: `${memberId}-inc`,
  ...extra,
});

export const options: MembershipOptions = { clusterName: 'prod', defaultDc: 'dc1' };
