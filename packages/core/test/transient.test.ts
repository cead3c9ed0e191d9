import { describe, expect, it } from '@jest/globals';
import { BackendError, InvalidArgumentError, LockLostError, TimeoutError } from '../src/index.js';
import { isTransient } from '../src/adapter.js';

const systemError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:6443`), { code });

describe('isTransient: only errors a retry can fix are retried', () => {
  it.each([
    ['a backend without a status (unreachable)', new BackendError('k8s', 'unreachable'), true],
    ['409 Conflict (a write raced another)', new BackendError('k8s', 'conflict', { status: 409 }), true],
    ['429 Too Many Requests', new BackendError('k8s', 'slow down', { status: 429 }), true],
    ['503', new BackendError('k8s', 'unavailable', { status: 503 }), true],
    ['our own timeout', new TimeoutError('no answer'), true],
    ['AbortSignal.timeout()', new DOMException('The operation was aborted due to timeout', 'TimeoutError'), true],
    ['ECONNRESET', systemError('ECONNRESET'), true],
    ['ECONNREFUSED', systemError('ECONNREFUSED'), true],
    ['403 Forbidden', new BackendError('k8s', 'forbidden', { status: 403 }), false],
    ['a lost lock', new LockLostError('l', 'taken'), false],
    ['a bad argument', new InvalidArgumentError('ttl'), false],
    ['a TypeError (a bug)', new TypeError("Cannot read properties of undefined (reading 'spec')"), false],
    ['a file that does not exist', systemError('ENOENT'), false],
    ['a thrown string', 'boom', false],
  ])('%s → %s', (_what, error, expected) => {
    expect(isTransient(error)).toBe(expected);
  });
});
