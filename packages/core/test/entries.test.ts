// What each entry of @muster/core exports: the application API, the adapter SDK, the conformance
// kit and the inversify module, with no runtime internals (issue 14, part 2). A new export is a
// decision: add it here, in the entry where it belongs.
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import * as app from '@muster/core';
import * as adapter from '@muster/core/adapter';
import * as inversify from '@muster/core/inversify';
import * as testing from '@muster/core/testing';

const names = (entry: object) => Object.keys(entry).sort();

describe('@muster/core entries', () => {
  it('the main entry is what an application uses', () => {
    expect(names(app)).toEqual(
      [
        ...['createMuster', 'Muster', 'loadConfig', 'ConfigSource', 'checkConfig', 'redactSecrets'],
        ...['LeaderElector', 'debounceDiscovery', 'FencedResource', 'StaleTokenError', 'systemClock'],
        ...[
          'MusterError',
          'ConfigError',
          'AdapterNotFoundError',
          'AdapterLoadError',
          'AdapterInvalidError',
          'AdapterVersionError',
          'AdapterStartError',
        ],
        ...['PortNotConfiguredError', 'LockLostError', 'TimeoutError', 'AbortError', 'ClosedError', 'BackendError'],
        ...['PayloadTooLargeError', 'SupersededError', 'InvalidArgumentError'],
      ].sort(),
    );
  });

  it('the adapter SDK is what an adapter builds with', () => {
    expect(names(adapter)).toEqual(
      [
        ...['defineAdapter', 's', 'validate', 'createDiscovery', 'createLock', 'createHeartbeatStore'],
        ...['nextFencingToken', 'parseFencingToken', 'fencingTokenFloor', 'EventChannel', 'EndpointSet', 'byId', 'sameValue'],
        ...['isTransient', 'sleep', 'anySignal', 'throwIfAborted', 'backoffDelay', 'abortErrorFrom'],
      ].sort(),
    );
  });

  it('testing holds the suites and the crash hook; inversify the module and identifiers', () => {
    expect(names(testing)).toContain('simulateCrash');
    expect(names(testing)).toContain('lockConformance');
    expect(names(inversify)).toEqual(['DiscoveryId', 'HeartbeatStoreId', 'LockId', 'MusterId', 'loadMuster', 'musterModule']);
  });

  it('no runtime internal is exported from any entry', () => {
    const all = new Set([...names(app), ...names(adapter), ...names(inversify), ...names(testing)]);
    for (const internal of ['importAdapter', 'parseYaml', 'formatPath', 'builtinAdapters', 'isAdapter', 'portNames', 'newIncarnation']) {
      expect([internal, all.has(internal)]).toEqual([internal, false]);
    }
    expect(names(app)).not.toContain('simulateCrash');
  });

  it('the port types import nothing of inversify', () => {
    const ports = new URL('../src/ports/', import.meta.url);
    for (const file of readdirSync(ports))
      expect([file, readFileSync(new URL(file, ports), 'utf8')]).not.toEqual([file, expect.stringContaining('inversify')]);
  });

  it('package.json exports the four entries with types first', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { exports: Record<string, unknown> };
    for (const entry of ['.', './adapter', './inversify', './testing']) {
      expect(Object.keys(pkg.exports[entry] as object)).toEqual(['types', 'default']);
    }
  });
});
