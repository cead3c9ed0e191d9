// Gap (b) of the adversary review, on the real agent: a member's record is removed after a restart
// took it over; the old incarnation, which had already been told it was superseded, beat first and
// wrote the record again, and from then on the newest incarnation was refused (MUSTER_SUPERSEDED)
// on every beat: the living process locked out of its own member id for good. An incarnation told
// it is superseded now never writes that member again (core's heartbeat client).
import { describe, expect, test } from '@jest/globals';
import { uniqueName } from '@muster/core/testing';
import { entry, portOpener } from './consul-testenv.js';

const open = portOpener();
const options = { minSessionTtl: '1s' };

(entry ? describe : describe.skip)('Consul: a removed member record and an old incarnation', () => {
  test('the newest incarnation keeps its member id after a remove', async () => {
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
