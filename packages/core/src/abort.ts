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
