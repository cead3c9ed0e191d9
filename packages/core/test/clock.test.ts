import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { systemClock } from '../src/index.js';

afterEach(() => {
  jest.restoreAllMocks();
});

describe('systemClock', () => {
  it('does not follow a wall-clock step backwards (NTP, an operator), so durations never run backwards', () => {
    const before = systemClock.now();
    jest.spyOn(Date, 'now').mockReturnValue(Date.now() - 3_600_000);
    expect(systemClock.now()).toBeGreaterThanOrEqual(before);
  });

  it('does not follow a wall-clock step forwards', () => {
    const before = systemClock.now();
    jest.spyOn(Date, 'now').mockReturnValue(Date.now() + 3_600_000);
    expect(systemClock.now() - before).toBeLessThan(60_000);
  });
});
