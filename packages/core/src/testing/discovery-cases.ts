import type { Discovery, DiscoveryEvent, Endpoint } from '../ports/discovery.js';
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
