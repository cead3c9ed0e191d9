import { backoffDelay, sleep } from '../abort.js';
import type { Registration } from '../ports/discovery.js';
import type { RegistrationBackend } from './backend.js';

/**
 * Keeps one registration alive until `signal` aborts: renews it every `renewInterval`, registers
 * again when the backend says it forgot it, and after a failure (backend down or restarting)
 * tries again sooner than the interval, since a TTL may be running out meanwhile.
 */
export async function keepRegistered(backend: RegistrationBackend, self: Registration, signal: AbortSignal): Promise<void> {
  const renew = backend.renew;
  if (!renew) return;
  const interval = Math.max(10, backend.renewInterval ?? 10_000);
  let failures = 0;
  while (!signal.aborted) {
    try {
      // unref: a keeper must not hold an otherwise finished process open.
      await sleep(failures === 0 ? interval : Math.min(interval, backoffDelay(failures - 1, 200, interval)), signal, { unref: true });
      if (!(await renew.call(backend, self, { signal }))) await backend.register(self, { signal });
      failures = 0;
    } catch {
      if (!signal.aborted) failures++;
    }
  }
}
