/** The pod's own connection: the service-account token, CA and namespace Kubernetes mounts into it. */
import { readFileSync, statSync } from 'node:fs';
import { badSetting, type ConnectionOptions, type ResolvedConnection } from './connection.js';
import { bearerTokenFile } from './credentials.js';

/** Where in-cluster credentials live in every pod that mounts a service-account token. */
export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

export function readable(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

export function loadInCluster(options: ConnectionOptions, env: Readonly<Record<string, string | undefined>>): ResolvedConnection {
  const dir = options.serviceAccountDir ?? serviceAccountDir;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  if (!host) {
    throw badSetting(
      options,
      'inCluster',
      'in-cluster config needs KUBERNETES_SERVICE_HOST, which Kubernetes sets in every pod; this process does not run in a pod: set kubeconfig (and context) instead',
    );
  }
  const tokenPath = `${dir}/token`;
  if (!readable(tokenPath)) {
    throw badSetting(
      options,
      'inCluster',
      `no service-account token at ${tokenPath}: the pod does not mount one (automountServiceAccountToken: false?); mount it or set kubeconfig`,
    );
  }
  let namespace = options.namespace;
  if (!namespace) {
    try {
      namespace = readFileSync(`${dir}/namespace`, 'utf8').trim();
    } catch {
      throw badSetting(options, 'namespace', `${dir}/namespace is missing; set the namespace option`);
    }
  }
  const caPath = `${dir}/ca.crt`;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    server: new URL(`https://${hostPart}:${port}`),
    namespace,
    source: `in-cluster config (${dir})`,
    credentials: bearerTokenFile(tokenPath, {
      tls: readable(caPath) ? { ca: readFileSync(caPath) } : {},
      identity: "the pod's service account",
    }),
  };
}
