import { BackendError, InvalidArgumentError, MusterError } from '@muster/core';
import type { ConsulClient } from './client.js';

export type SessionBehavior = 'release' | 'delete';

/** Consul's hard ceiling for a session TTL; the floor is the servers' session_ttl_min (10 s unless configured). */
export const maxSessionTtl = 24 * 3_600_000;

/** A TTL in the Go duration syntax Consul parses. */
export function sessionTtl(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0 || ms > maxSessionTtl) {
    throw new InvalidArgumentError(`session ttl ${ms} ms: Consul accepts 10 s (or the servers' session_ttl_min) up to 24 h`);
  }
  return `${Math.ceil(ms)}ms`;
}

/**
 * Creates a session on the agent's node. It keeps Consul's default node check (serfHealth): a
 * session is only as alive as the agent that renews it, so a failed agent frees its locks without
 * waiting out the TTL.
 */
export async function createSession(
  client: ConsulClient,
  options: { name: string; ttl: number; behavior: SessionBehavior; lockDelay: number; signal: AbortSignal },
): Promise<string> {
  try {
    const res = await client.put<{ ID: string }>('/v1/session/create', {
      body: {
        Name: options.name,
        TTL: sessionTtl(options.ttl),
        Behavior: options.behavior,
        LockDelay: `${Math.round(options.lockDelay)}ms`,
      },
      signal: options.signal,
      purpose: 'create a Consul session',
      rule: 'session_prefix "" { policy = "write" }',
    });
    if (!res.body?.ID) throw new BackendError('consul', 'create a Consul session: the agent answered without a session ID');
    return res.body.ID;
  } catch (error) {
    if (MusterError.is(error, 'MUSTER_BACKEND') && /Invalid Session TTL/i.test(error.message)) {
      throw new InvalidArgumentError(
        `ttl ${(options.ttl / 1000).toFixed(1)} s is outside what the Consul servers accept (${error.message.replace(/^.*?Invalid Session TTL/i, 'Invalid Session TTL')}); ` +
          `use a ttl of at least their session_ttl_min (10 s by default)`,
      );
    }
    throw error;
  }
}

/** Renews a session; false when Consul no longer knows it (expired, destroyed, state lost). */
export async function renewSession(client: ConsulClient, session: string, signal: AbortSignal): Promise<boolean> {
  const res = await client.put(`/v1/session/renew/${encodeURIComponent(session)}`, {
    accept: [404],
    signal,
    purpose: `renew Consul session ${session}`,
    rule: 'session_prefix "" { policy = "write" }',
  });
  return res.status !== 404;
}

export async function destroySession(client: ConsulClient, session: string, signal: AbortSignal): Promise<void> {
  await client.put(`/v1/session/destroy/${encodeURIComponent(session)}`, { signal, purpose: `destroy Consul session ${session}` });
}
