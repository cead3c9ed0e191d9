import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as core from '../src/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const doc = readFileSync(join(here, '../docs/errors.md'), 'utf8');
const source = readFileSync(join(here, '../src/errors.ts'), 'utf8');

describe('error codes', () => {
  const typed = [...source.matchAll(/\| '(MUSTER_[A-Z_]+)'/g)].map((m) => m[1]).sort();
  const documented = [...doc.matchAll(/^\| `(MUSTER_[A-Z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!] as const);

  it('every code in the ErrorCode type is documented, and nothing else', () => {
    expect(documented.map(([code]) => code).sort()).toEqual(typed);
  });

  it('each documented class exists, is exported and carries its code', () => {
    for (const [code, classes] of documented) {
      for (const name of [...classes.matchAll(/`(\w+)`/g)].map((m) => m[1]!)) {
        const ctor = (core as Record<string, unknown>)[name];
        expect(typeof ctor).toBe('function');
        expect(source.includes(`'${code}'`) || name === 'StaleTokenError').toBe(true);
      }
    }
  });

  it('is() recognises errors across copies by brand, not by prototype', () => {
    const error = new core.TimeoutError('x');
    const foreign = Object.assign(Object.create(null), { [Symbol.for('muster.error')]: true, code: 'MUSTER_TIMEOUT' });
    expect(core.MusterError.is(error, 'MUSTER_TIMEOUT')).toBe(true);
    expect(core.MusterError.is(foreign, 'MUSTER_TIMEOUT')).toBe(true);
    expect(core.MusterError.is(new Error('x'))).toBe(false);
    expect(core.MusterError.is(error, 'MUSTER_ABORTED')).toBe(false);
  });

  it('each class sets its code and keeps the cause', () => {
    const cause = new Error('root');
    const samples: [core.MusterError, string][] = [
      [new core.ConfigError('a.b', 'bad', { file: 'f.yaml', line: 2, column: 3 }, { cause }), 'MUSTER_CONFIG'],
      [new core.AdapterNotFoundError('x', 'm', { cause }), 'MUSTER_ADAPTER_NOT_FOUND'],
      [new core.AdapterLoadError('x', 'm', { cause }), 'MUSTER_ADAPTER_LOAD'],
      [new core.LockLostError('l', 'why', { cause }), 'MUSTER_LOCK_LOST'],
      [new core.BackendError('consul', 'm', { status: 403, cause }), 'MUSTER_BACKEND'],
    ];
    for (const [error, code] of samples) {
      expect(error.code).toBe(code);
      expect(error.cause).toBe(cause);
    }
    expect(samples[0]![0].message).toBe('f.yaml:2:3: a.b: bad');
  });
});
