import { describe, expect, it } from '@jest/globals';
import { parseReplication } from '../../src/routing/replication.js';

describe('parseReplication', () => {
  it('reads SimpleStrategy by short or full class name', () => {
    expect(parseReplication({ class: 'org.apache.cassandra.locator.SimpleStrategy', replication_factor: '3' })).toEqual({
      kind: 'simple',
      factor: 3,
    });
    expect(
      parseReplication(
        new Map([
          ['class', 'SimpleStrategy'],
          ['replication_factor', '1'],
        ]),
      ),
    ).toEqual({ kind: 'simple', factor: 1 });
  });

  it('reads NetworkTopologyStrategy per data center, counting transient replicas as replicas', () => {
    expect(parseReplication({ class: 'org.apache.cassandra.locator.NetworkTopologyStrategy', dc1: '3', dc2: '2/1' })).toEqual({
      kind: 'network',
      factors: new Map([
        ['dc1', 3],
        ['dc2', 2],
      ]),
    });
  });

  it('gives nothing for strategies it cannot place replicas for, or a bad factor', () => {
    expect(parseReplication({ class: 'org.apache.cassandra.locator.LocalStrategy' })).toBeUndefined();
    expect(parseReplication({ class: 'org.apache.cassandra.locator.EverywhereStrategy' })).toBeUndefined();
    expect(parseReplication({ class: 'SimpleStrategy', replication_factor: 'three' })).toBeUndefined();
    expect(parseReplication({ replication_factor: '3' })).toBeUndefined();
  });
});
