// The checker tested against adapters that are broken on purpose (test/fixtures): each must be
// flagged with the violation its defect causes. A checker that passes these is not checking.
import { describe, expect, test } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { staticProfile, type FaultKind, type ViolationKind } from '@muster/chaos';
import { chaos, seedFor } from './chaos-run.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.mjs`, import.meta.url));

describe('chaos checker against broken adapters', () => {
  test.each<[string, ViolationKind, FaultKind[]]>([
    ['constant-token', 'token-not-increasing', []],
    ['token-reset', 'refused-current-holder', []],
    ['early-handover', 'two-holders', []],
    ['expired-lease', 'expired-on-acquire', []],
    ['immortal-heartbeat', 'stale-missed', ['kill-any']],
  ])(
    '%s is flagged with %s',
    async (name, expected, faults) => {
      const seed = seedFor(11);
      const profile = staticProfile({ runId: `${name}-${process.pid}`, ttl: 500, adapter: fixture(name) });
      const result = await chaos({ profile, seed, contenders: 3, durationMs: 8000, faults });
      expect(result.verdict.acquisitions).toBeGreaterThan(0);
      expect(result.verdict.violations.map((v) => v.kind)).toContain(expected);
    },
    60_000,
  );

  test('control: the correct static adapter, same size and no faults, has no violation', async () => {
    const profile = staticProfile({ runId: `control-${process.pid}`, ttl: 500 });
    const result = await chaos({ profile, seed: seedFor(11), contenders: 3, durationMs: 8000, faults: [] });
    expect(result.verdict.acquisitions).toBeGreaterThan(3);
    expect(result.verdict.violations).toEqual([]);
  }, 60_000);
});
