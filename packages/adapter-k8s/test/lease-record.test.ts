import { describe, expect, test } from '@jest/globals';
import { microTime } from '../src/client.js';
import { acquiredSpec, judge, leaseSeconds, observe, recordKey, releasedSpec, renewedSpec, type LeaseSpec } from '../src/lease-record.js';

const held = (holder: string, seconds = 10, renewTime = '2026-01-01T00:00:00.000000Z'): LeaseSpec => ({
  holderIdentity: holder,
  leaseDurationSeconds: seconds,
  acquireTime: '2026-01-01T00:00:00.000000Z',
  renewTime,
  leaseTransitions: 3,
});

describe('lease record judgement (client-go rules)', () => {
  test("expiry counts from when this observer saw the record change, with the holder's duration", () => {
    const spec = held('other', 10);
    const first = observe(undefined, spec, 1_000);
    expect(judge(spec, first, 'me', 1_000)).toEqual({ free: false, holder: 'other', until: 11_000 });
    // The same content later keeps the first sighting...
    const again = observe(first, spec, 5_000);
    expect(again).toBe(first);
    expect(judge(spec, again, 'me', 10_999).free).toBe(false);
    expect(judge(spec, again, 'me', 11_000)).toEqual({ free: true, why: 'expired' });
    // ...a renewal (new renewTime) restarts the count, whatever the remote timestamp says.
    const renewed = { ...spec, renewTime: '1999-01-01T00:00:00.000000Z' };
    const seen = observe(again, renewed, 10_000);
    expect(seen.observedAt).toBe(10_000);
    expect(judge(renewed, seen, 'me', 19_999).free).toBe(false);
  });

  test('a renewTime far in the past or future does not matter on first sight', () => {
    for (const renewTime of ['2000-01-01T00:00:00.000000Z', '2100-01-01T00:00:00.000000Z']) {
      const spec = held('other', 5, renewTime);
      expect(judge(spec, observe(undefined, spec, 50), 'me', 50).free).toBe(false);
      expect(judge(spec, observe(undefined, spec, 50), 'me', 5_050).free).toBe(true);
    }
  });

  test('released (empty holder) is free at once; our own identity is free to take back', () => {
    const released = releasedSpec(held('other'), 0);
    expect(judge(released, observe(undefined, released, 0), 'me', 0)).toEqual({ free: true, why: 'released' });
    expect(judge(undefined, observe(undefined, undefined, 0), 'me', 0)).toEqual({ free: true, why: 'released' });
    expect(judge(held('me'), observe(undefined, held('me'), 0), 'me', 0)).toEqual({ free: true, why: 'mine' });
  });

  test('only the record counts as a change, not metadata', () => {
    expect(recordKey(held('a'))).toBe(recordKey({ ...held('a') }));
    expect(recordKey(held('a'))).not.toBe(recordKey(held('b')));
  });

  test('acquire bumps leaseTransitions, renew keeps it, release keeps it with an empty holder and 1 s', () => {
    const now = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    expect(acquiredSpec(undefined, 'me', 1500, now)).toEqual({
      holderIdentity: 'me',
      leaseDurationSeconds: 2,
      acquireTime: '2026-01-02T03:04:05.678000Z',
      renewTime: '2026-01-02T03:04:05.678000Z',
      leaseTransitions: 0,
    });
    const acquired = acquiredSpec(held('other'), 'me', 15_000, now);
    expect(acquired.leaseTransitions).toBe(4);
    const renewed = renewedSpec(acquired, 15_000, now + 5000);
    expect(renewed).toMatchObject({
      holderIdentity: 'me',
      leaseTransitions: 4,
      acquireTime: acquired.acquireTime,
      renewTime: microTime(now + 5000),
    });
    expect(releasedSpec(renewed, now)).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 4 });
  });

  test('published seconds round up, never below 1', () => {
    expect([leaseSeconds(1), leaseSeconds(1000), leaseSeconds(1001), leaseSeconds(15_000)]).toEqual([1, 1, 2, 15]);
  });
});
