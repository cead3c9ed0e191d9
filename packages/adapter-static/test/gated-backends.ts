// The conformance kit's `hang` for in-process backends, which have no connection a proxy could
// hold: every call waits at a gate while the hang lasts, then runs late, as a paused server works
// through its queue. A call whose signal fires at the gate is dropped, as a torn-down request is.
import { abortErrorFrom, type HeartbeatBackend, type LockBackend } from '@muster/core/adapter';
import type { BackendHang } from '@muster/core/testing';

export class Gate {
  #held = false;
  readonly #waiting = new Set<() => void>();

  readonly hang: BackendHang = {
    begin: async () => void (this.#held = true),
    end: async () => {
      this.#held = false;
      for (const go of [...this.#waiting]) go();
    },
  };

  /** Resolves at once, or when the hang ends; rejects when `signal` fires first. */
  pass(signal: AbortSignal | undefined): Promise<void> {
    if (!this.#held) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const go = () => {
        this.#waiting.delete(go);
        signal?.removeEventListener('abort', drop);
        resolve();
      };
      const drop = () => {
        this.#waiting.delete(go);
        reject(abortErrorFrom(signal!, 'a call held by the hang'));
      };
      this.#waiting.add(go);
      signal?.addEventListener('abort', drop, { once: true });
    });
  }
}

/** `inner` behind `gate`. */
export function gatedLockBackend(inner: LockBackend, gate: Gate): LockBackend {
  return {
    holder: inner.holder,
    tryAcquire: async (name, options) => {
      await gate.pass(options.signal);
      return inner.tryAcquire(name, options);
    },
    renew: async (name, grant, options) => {
      await gate.pass(options.signal);
      return inner.renew(name, grant, options);
    },
    release: async (name, grant, options) => {
      await gate.pass(options.signal);
      return inner.release(name, grant, options);
    },
    ...(inner.waitForChange
      ? {
          waitForChange: async (name, options) => {
            await gate.pass(options.signal);
            return inner.waitForChange!(name, options);
          },
        }
      : {}),
    close: async () => inner.close?.(),
  };
}

/** `inner` behind `gate`; a watch's views wait at the gate too. */
export function gatedHeartbeatBackend(inner: HeartbeatBackend, gate: Gate): HeartbeatBackend {
  return {
    write: async (record, options) => {
      await gate.pass(options.signal);
      return inner.write(record, options);
    },
    read: async (id, options) => {
      await gate.pass(options.signal);
      return inner.read(id, options);
    },
    list: async (group, options) => {
      await gate.pass(options.signal);
      return inner.list(group, options);
    },
    remove: async (id, options) => {
      await gate.pass(options.signal);
      return inner.remove(id, options);
    },
    ...(inner.views
      ? {
          async *views(group, options) {
            await gate.pass(options.signal);
            for await (const view of inner.views!(group, options)) {
              await gate.pass(options.signal);
              yield view;
            }
          },
        }
      : {}),
    close: async () => inner.close?.(),
  };
}
