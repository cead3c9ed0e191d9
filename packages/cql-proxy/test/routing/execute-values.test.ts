import { describe, expect, it } from '@jest/globals';
import { encodeExecute } from '../../src/protocol/requests.js';
import { UNSET } from '../../src/protocol/reader.js';
import { executeValues } from '../../src/routing/execute-values.js';

const id = Buffer.from('0123456789abcdef', 'hex');
const v = (s: string) => Buffer.from(s);

describe('executeValues', () => {
  it.each([3, 4, 5])('reads the values at the key indexes, in key order (v%i)', (version) => {
    const body = encodeExecute(
      {
        id,
        ...(version >= 5 ? { resultMetadataId: Buffer.from('beef', 'hex') } : {}),
        parameters: { consistency: 1, values: [v('zero'), v('one'), v('two')], pageSize: 100, timestamp: 5n },
      },
      version,
    );
    expect(executeValues(body, version, [2, 0])).toEqual([v('two'), v('zero')]);
  });

  it('gives nothing when the key cannot be read from the request', () => {
    const body = (values: (Buffer | null | typeof UNSET)[], valueNames?: string[]) =>
      encodeExecute({ id, parameters: { consistency: 1, values, ...(valueNames ? { valueNames } : {}) } }, 4);
    expect(executeValues(body([null, v('a')]), 4, [0])).toBeUndefined();
    expect(executeValues(body([UNSET]), 4, [0])).toBeUndefined();
    expect(executeValues(body([v('a')]), 4, [1])).toBeUndefined();
    expect(executeValues(body([v('a')], ['k']), 4, [0])).toBeUndefined();
    expect(executeValues(encodeExecute({ id, parameters: { consistency: 1 } }, 4), 4, [0])).toBeUndefined();
    const whole = body([v('abc')]);
    for (let cut = 0; cut < whole.length; cut++) expect(executeValues(whole.subarray(0, cut), 4, [0])).toBeUndefined();
  });
});
