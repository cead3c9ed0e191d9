/**
 * Exec plugins (aws, gke-gcloud-auth-plugin, kubelogin) and auth providers: @kubernetes/client-node
 * runs them and caches their tokens; we take the Authorization header it computes per request.
 * This module is imported only for such users, and it alone imports client-node for them.
 */
import type { RequestOptions } from 'node:https';
import { badSetting, type ConnectionOptions, type Credentials, type TlsMaterial } from './connection.js';
import type { UserSpec } from './kubeconfig-files.js';

export async function pluginCredentials(
  user: { name: string; spec: UserSpec; dir: string },
  who: { tls: TlsMaterial; identity: string },
  options: ConnectionOptions,
): Promise<Credentials> {
  let clientNode: typeof import('@kubernetes/client-node');
  try {
    clientNode = await import('@kubernetes/client-node');
  } catch (cause) {
    throw badSetting(
      options,
      'kubeconfig',
      `${who.identity} authenticates through ${user.spec.exec ? 'an exec plugin' : 'an auth-provider'}, which the adapter runs with @kubernetes/client-node: install it (npm install @kubernetes/client-node@^1.4)`,
      cause,
    );
  }
  // A config of this user alone: client-node needs a cluster and a context to apply its auth.
  const kc = new clientNode.KubeConfig();
  kc.loadFromString(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'muster', cluster: { server: 'https://unused.invalid' } }],
      users: [{ name: user.name, user: user.spec }],
      contexts: [{ name: 'muster', context: { cluster: 'muster', user: user.name } }],
      'current-context': 'muster',
    }),
  );
  kc.makePathsAbsolute(user.dir);
  return {
    ...who,
    headers: async (): Promise<Record<string, string>> => {
      const opts: RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      const auth = (opts.headers as Record<string, string> | undefined)?.Authorization;
      return auth ? { Authorization: auth } : {};
    },
  };
}
