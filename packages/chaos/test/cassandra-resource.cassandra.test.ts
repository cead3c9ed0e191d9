// `--resource cassandra`: the checker's fenced resource is Cassandra itself, through
// @muster/fence-cassandra. Here the resource alone, fed a sequence a zombie holder produces.
import { expect, test } from '@jest/globals';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { cassandraResource } from '../src/cassandra-resource.js';

const backend = testServer('cassandra');

(backend ? test : test.skip)(
  'Cassandra accepts the newer holder and equal tokens, refuses the paused old holder, and the last write matches the record',
  async () => {
    const resource = await cassandraResource(`chaos-resource-${process.pid}`, 1);
    let summary: string | undefined;
    try {
      const outcomes = await Promise.all([
        resource.write(5n, 'c0.1', 'c0.1#1'),
        resource.write(5n, 'c0.1', 'c0.1#2'),
        resource.write(7n, 'c1.1', 'c1.1#1'),
        resource.write(5n, 'c0.1', 'c0.1#3'), // the old holder, back from a pause
        resource.write(7n, 'c1.1', 'c1.1#2'),
      ]);
      expect(outcomes).toEqual([true, true, true, false, true]);
    } finally {
      summary = await resource.close();
    }
    expect(summary).toMatch(
      /4 writes applied, 1 refused by Cassandra, 0 timed out and were settled by a serial read \(then applied or sent again\); fence 7, last write c1\.1#2 \(the last accepted one/,
    );
  },
  300_000,
);
