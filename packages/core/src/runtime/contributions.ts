import type { AdapterContext, DefinedAdapter } from './adapter.js';

/** An adapter that has services of its own to add to an application's container, with what it was configured with. */
export interface AdapterContribution {
  readonly adapter: DefinedAdapter;
  readonly options: unknown;
  readonly context: AdapterContext;
}

// Kept beside the Muster rather than on it: only @muster/core/inversify reads them, and they are no
// part of what an application sees on a Muster.
const byMuster = new WeakMap<object, readonly AdapterContribution[]>();

export function recordContributions<M extends object>(muster: M, contributions: readonly AdapterContribution[]): M {
  byMuster.set(muster, contributions);
  return muster;
}

export function contributionsOf(muster: object): readonly AdapterContribution[] {
  return byMuster.get(muster) ?? [];
}
