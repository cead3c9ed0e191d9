import type { ProxyConfig } from '../config.js';
import type { Membership } from '../virtual/membership.js';
import type { BackendView } from './backend-cluster.js';
import type { SystemTableIntercept } from './context.js';

export interface InterceptSources {
  readonly config: ProxyConfig;
  readonly backend: () => BackendView;
  readonly membership: () => Membership | undefined;
}

/** Placeholder until the virtual system tables are wired in: forwards everything. */
export function createSystemTableIntercept(_sources: InterceptSources): SystemTableIntercept {
  return { query: () => undefined, prepare: () => undefined, execute: () => undefined };
}
