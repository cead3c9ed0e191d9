import type { Discovery, DiscoveryEvent, Endpoint } from '../ports/discovery.js';
import { assert, eventually, nextWithin } from './runner.js';
import type { DiscoveryControl, DiscoverySuiteOptions } from './discovery.js';

/** What the Discovery suite hands its case files: one test setup, shared by all of them. */
export interface DiscoveryCases {
  readonly options: DiscoverySuiteOptions;
  readonly propagation: number;
  readonly test: (name: string, fn: () => Promise<void>) => void;
  readonly setup: () => Promise<{ discovery: Discovery; control: DiscoveryControl }>;
}

export const idsOf = (endpoints: readonly Endpoint[]) => endpoints.map((e) => e.id);

export type ChangeEvent = Extract<DiscoveryEvent, { endpoint: Endpoint }>;

export const isChange = (e: DiscoveryEvent): e is ChangeEvent => 'endpoint' in e;

/** How long a backend may take to come back into use, or a forgotten registration to return (see DiscoverySuiteOptions.recovery). */
export const retryWindow = (options: DiscoverySuiteOptions, propagation: number) => options.recovery ?? propagation * 2 + 35_000;

/** One line per event, for assertions and messages: `added:b[a,b]`. */
export const eventSummary = (e: DiscoveryEvent) => `${e.type}${isChange(e) ? `:${e.endpoint.id}` : ''}[${idsOf(e.endpoints).join(',')}]`;

type Member = { id: string; address: string; port: number; ready: boolean };

/** Adds `members` through the control and waits until the client lists them all. */
export async function seeded(
  discovery: Discovery,
  control: DiscoveryControl,
  members: readonly Member[],
  propagation: number,
): Promise<void> {
  for (const member of members) await control.add(member);
  await eventually(
    `${members.map((m) => m.id).join(', ')} to be listed`,
    async () => ((await discovery.list(control.service)).length === members.length ? true : undefined),
    propagation,
  );
}

/** Adds `members`, then opens a watch and checks that its first item is a snapshot of them. */
export async function watching(
  discovery: Discovery,
  control: DiscoveryControl,
  members: readonly Member[],
  propagation: number,
): Promise<{ watch: AsyncIterator<DiscoveryEvent>; snapshot: DiscoveryEvent }> {
  await seeded(discovery, control, members, propagation);
  const watch = discovery.watch(control.service)[Symbol.asyncIterator]();
  const snapshot = await nextWithin(watch, propagation, 'initial snapshot');
  assert.equal(snapshot.type, 'snapshot', `the first item was not a snapshot but ${eventSummary(snapshot)}`);
  assert.deepEqual(idsOf(snapshot.endpoints), members.map((m) => m.id).sort());
  return { watch, snapshot };
}

/** The first `n` items of a stream (fewer if it ends), then stops it. */
export async function takeEvents<T>(iterable: AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) {
    out.push(item);
    if (out.length === n) break;
  }
  return out;
}
