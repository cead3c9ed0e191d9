/** The ways a request proves who we are that need no library: a token, a rotated token file, basic auth. */
import type { Credentials, TlsMaterial } from './connection.js';
import { TokenFile } from './token-file.js';

type Identity = { tls: TlsMaterial; identity: string };

export function bearerToken(token: string, who: Identity): Credentials {
  const headers = { Authorization: `Bearer ${token}` };
  return { ...who, headers: async () => headers };
}

/** A token file (kubeconfig `tokenFile`, the pod's service-account token): re-read as it rotates. */
export function bearerTokenFile(path: string, who: Identity, options?: { maxAge?: number }): Credentials {
  const file = new TokenFile(path, options);
  return {
    ...who,
    headers: async () => ({ Authorization: `Bearer ${file.read()}` }),
    refresh: async () => file.reload(),
  };
}

export function basicAuth(username: string, password: string, who: Identity): Credentials {
  const headers = { Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` };
  return { ...who, headers: async () => headers };
}

/** Client certificate only (in `tls`), or an anonymous request. */
export function noHeaders(who: Identity): Credentials {
  return { ...who, headers: async () => ({}) };
}
