// The requests in flight on a backend connection, by stream id: answers find their handler, timeouts
// fire once and keep the id reserved until the late answer, a pause moves deadlines, a close fails the rest.
import { describe, expect, it } from '@jest/globals';
import type { Frame } from '../../src/protocol/frame.js';
import { PendingRequests, TIMED_OUT, type ResponseHandler } from '../../src/proxy/pending-requests.js';

/** A handler that records what it was called with. */
function recorder() {
  const calls: { error?: string; stream?: number }[] = [];
  const handler: ResponseHandler = (error, response) => calls.push(error ? { error: error.message } : { stream: response!.stream });
  return { calls, handler };
}

const answer = (stream: number) => ({ stream }) as Frame;

describe('PendingRequests', () => {
  it('hands each answer to the handler of its stream id, once', () => {
    const pending = new PendingRequests();
    const a = recorder();
    const b = recorder();
    pending.add(0, a.handler, undefined);
    pending.add(3, b.handler, undefined); // ids need not come in order
    pending.take(3)!(undefined, answer(3));
    expect(pending.take(3)).toBeUndefined(); // a second answer on the id finds nothing
    expect(pending.take(1)).toBeUndefined(); // nor does an id never used
    expect(pending.take(30_000)).toBeUndefined(); // nor one past every id used
    pending.take(0)!(undefined, answer(0));
    expect(a.calls).toEqual([{ stream: 0 }]);
    expect(b.calls).toEqual([{ stream: 3 }]);
  });

  it('times a request out once; its id stays taken until the late answer arrives', () => {
    const pending = new PendingRequests();
    const slow = recorder();
    const patient = recorder();
    const now = Date.now();
    pending.add(0, slow.handler, 100);
    pending.add(1, patient.handler, undefined);
    expect(pending.expire(now + 50, () => new Error('late'))).toBe(false);
    expect(pending.expire(now + 1_000, (timeout) => new Error(`no answer within ${timeout} ms`))).toBe(true);
    expect(pending.expire(now + 2_000, () => new Error('again'))).toBe(false);
    expect(slow.calls).toEqual([{ error: 'no answer within 100 ms' }]);
    expect(patient.calls).toEqual([]);
    // The late answer frees the id (the caller gives it back) without reaching the handler again.
    expect(pending.take(0)).toBe(TIMED_OUT);
    expect(pending.take(0)).toBeUndefined();
  });

  it('moves deadlines by the time the connection was not read, and fails everything left on close', () => {
    const pending = new PendingRequests();
    const first = recorder();
    const second = recorder();
    const now = Date.now();
    pending.add(0, first.handler, 100);
    pending.add(1, second.handler, 100);
    pending.postpone(10_000);
    expect(pending.expire(now + 1_000, () => new Error('late'))).toBe(false);
    pending.take(1)!(undefined, answer(1));
    pending.failAll(new Error('closed'));
    pending.failAll(new Error('closed twice'));
    expect(first.calls).toEqual([{ error: 'closed' }]);
    expect(second.calls).toEqual([{ stream: 1 }]);
  });
});
