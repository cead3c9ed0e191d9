// What identifies the backend in free text: every DC's nodes count, not only the local DC's the
// proxy dials, and a node that is still joining (no tokens, so not in the ring) too.
import { describe, expect, it } from '@jest/globals';
import type { BackendNode } from '../../src/proxy/backend-cluster.js';
import { backendFootprint } from '../../src/proxy/backend-footprint.js';
import { backendView } from './scripted-backend.js';

const LOCAL: BackendNode = { host: '10.0.0.1', port: 9042, dataCenter: 'dc1', hostId: '11111111-1111-4111-8111-111111111111' };
const REMOTE: BackendNode = { host: '10.1.0.1', port: 9042, dataCenter: 'dc2', hostId: '22222222-2222-4222-8222-22222222222A' };
const JOINING: BackendNode = { host: '10.1.0.2', port: 9042, dataCenter: 'dc2', hostId: '33333333-3333-4333-8333-333333333333' };

describe('the backend footprint', () => {
  it('holds the host ids and addresses of every data center, joining nodes included', () => {
    const view = {
      ...backendView(),
      nodes: [LOCAL],
      allNodes: [LOCAL, REMOTE, JOINING],
      routing: {
        ring: [
          { host: LOCAL.host, port: 9042, dataCenter: 'dc1', rack: 'r1', tokens: [-100n] },
          { host: REMOTE.host, port: 9042, dataCenter: 'dc2', rack: 'r1', tokens: [100n] },
        ],
        replication: new Map(),
        localDataCenter: 'dc1',
      },
    };
    const footprint = backendFootprint(view);
    expect([...footprint.hostIds].sort()).toEqual([LOCAL.hostId, REMOTE.hostId!.toLowerCase(), JOINING.hostId].sort());
    expect([...footprint.addresses].sort()).toEqual([LOCAL.host, REMOTE.host, JOINING.host].sort());
    expect([...footprint.tokens].sort()).toEqual(['-100', '100']);
  });
});
