import { abortErrorFrom } from './errors.js';

/** Options every waiting call takes. */
export interface WaitOptions {
  readonly signal?: AbortSignal;
}

export function throwIfAborted(signal: AbortSignal | undefined, what?: string): void {
  if (signal?.aborted) throw abortErrorFrom(signal, what);
}

/** Resolves after `ms`, or rejects with AbortError when `signal` fires first. */
export function sleep(ms: number, signal?: AbortSignal, options: { unref?: boolean } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortErrorFrom(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortErrorFrom(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (options.unref) timer.unref();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A signal that fires when any input fires (AbortSignal.any, tolerant of undefined inputs). */
export function anySignal(...signals: (AbortSignal | undefined)[]): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 1) return present[0]!;
  return AbortSignal.any(present);
}

/** Full-jitter exponential backoff: attempt 0 → around `initialMs`, capped at `maxMs`. */
export function backoffDelay(attempt: number, initialMs = 800, maxMs = 30_000, random = Math.random): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * The promise's outcome, or AbortError (the signal's MusterError reason as it is) as soon as
 * `signal` fires, whether or not the work behind the promise heeds the signal: a backend call that
 * ignores it (a client without AbortSignal support, a request stuck on a silent connection) must
 * not hold its caller past an abort or a give-up point. The work itself is left to settle.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal, what?: string): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortErrorFrom(signal, what));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortErrorFrom(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
