// What a draining instance says of itself: a data center no driver is set for, and REMOVED_NODE.
import { describe, expect, it } from '@jest/globals';
import { farewellEvents, leavingDataCenter } from '../../src/proxy/leaving.js';
import { deriveMembership } from '../../src/virtual/membership.js';
import { advanceView } from '../../src/virtual/view.js';

const viewOf = (address: string | undefined) =>
  advanceView(
    undefined,
    deriveMembership(
      {
        self: { id: 'proxy-a', ...(address ? { address } : {}), nativePort: 9042, ready: false, dc: leavingDataCenter('dc1') },
        endpoints: [{ id: 'proxy-b', address: '10.0.0.2', port: 9042, ready: true, metadata: {} }],
        heartbeats: [],
      },
      { clusterName: 'c', defaultDc: 'dc1', requireHeartbeat: false },
    ),
  );

describe('a leaving instance', () => {
  it('shows itself in a data center of its own, and tells its clients it is removed', () => {
    const view = viewOf('::ffff:10.0.0.1');
    expect(view.self.dc).toBe('dc1-draining');
    expect(view.self.dc).not.toBe(view.peers[0]?.dc);
    expect(farewellEvents(view)).toEqual([
      { type: 'TOPOLOGY_CHANGE', change: 'REMOVED_NODE', address: { address: '10.0.0.1', port: 9042 } },
    ]);
  });

  it('says nothing when drivers could not know it by an address', () => {
    expect(farewellEvents(viewOf(undefined))).toEqual([]);
    expect(farewellEvents(undefined)).toEqual([]);
  });
});
