import { AdapterInvalidError, AdapterVersionError } from '../errors.js';
import type { DefinedAdapter } from './adapter.js';
import { musterCoreVersion } from '../version.js';
import { parseRange, parseVersion } from './semver-range.js';

/**
 * Refuses an adapter built for another core (fastify's plugin version check): an adapter compiled
 * against an older API would otherwise fail later, somewhere inside a factory, with a less clear
 * error. Adapters that declare no range are not checked.
 */
export function checkCoreRange(specifier: string, adapter: DefinedAdapter, version = musterCoreVersion): void {
  if (adapter.core === undefined) return;
  const inRange = typeof adapter.core === 'string' ? parseRange(adapter.core) : undefined;
  if (!inRange) {
    throw new AdapterInvalidError(
      specifier,
      `adapter '${specifier}' declares core: ${JSON.stringify(adapter.core)}, which is no range Muster reads; write one such as '^${version}' (^, ~, >=, <, exact versions and ||)`,
    );
  }
  if (!inRange(parseVersion(version)!)) {
    throw new AdapterVersionError(specifier, adapter.core, version);
  }
}
