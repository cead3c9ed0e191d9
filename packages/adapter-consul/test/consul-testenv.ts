// The testenv Consul agent for this package's integration tests, and one way to open the
// adapter's ports on it: every Muster a test file opens is closed after that file's tests.
import { afterAll } from '@jest/globals';
import { createMuster, type Muster } from '@muster/core';
import { testServer } from '../../../scripts/testenv/state.mjs';

export interface ConsulEntry {
  address: string;
  url: string;
}

export const entry = testServer<ConsulEntry>('consul');

export function portOpener() {
  const musters: Muster[] = [];
  afterAll(async () => {
    await Promise.allSettled(musters.map((m) => m.close()));
  });
  return async <P extends 'discovery' | 'lock' | 'heartbeat'>(port: P, options: Record<string, unknown>): Promise<Muster[P]> => {
    const muster = await createMuster({ [port]: { adapter: 'consul', options: { address: entry!.address, ...options } } });
    musters.push(muster);
    return muster[port];
  };
}
