// Known gap (b) of the adversary review, measured on the real agent: a member's record is removed
// after a restart took it over; the old incarnation, which had already been told it was superseded,
// beats first and writes the record again, and from then on the newest incarnation is refused
// (MUSTER_SUPERSEDED) on every beat: the living process is locked out of its own member id for
// good, the old one keeps it. The takeover rule lives in core's heartbeat-client.ts, which is
// being reworked; pinned with test.failing until then (make it `test` with the fix).
import { describe, expect, test } from '@jest/globals';
import { uniqueName } from '@muster/core/testing';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
const options = { minSessionTtl: '1s' };

(entry ? describe : describe.skip)('Consul: a removed member record and an old incarnation', () => {
  test.failing('the newest incarnation keeps its member id after a remove: KNOWN DEFECT, the old one takes it', async () => {
    const [old, young, operator] = [await open('heartbeat', options), await open('heartbeat', options), await open('heartbeat', options)];
    const id = uniqueName('superseded-after-remove');
    const beat = (hb: typeof old, n: number) =>
      hb.beat(id, { n }, { ttl: 3000 }).then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      );
    expect([await beat(old, 1), await beat(young, 2), await beat(old, 3)]).toEqual(['ok', 'ok', 'MUSTER_SUPERSEDED']);
    await operator.remove(id);
    await beat(old, 4);
    expect(await beat(young, 5)).toBe('ok');
  });
});
