/**
 * A KubeConfig the application built with @kubernetes/client-node and handed to the adapter (as
 * unstorage drivers take the application's client). Every request asks it for its auth
 * (`applyToHTTPSOptions`: tokens, exec plugins, auth providers, basic auth, impersonation), so
 * whatever it does to authenticate, the adapter does too. The shape is written out here rather
 * than imported, so that this module loads nothing of client-node: the application already did.
 */
import type { RequestOptions } from 'node:https';
import { badSetting, type ConnectionOptions, type Credentials, type ResolvedConnection, type TlsMaterial } from './connection.js';
import { clusterAddress } from './cluster-address.js';

/** What the adapter uses of client-node's KubeConfig (1.x); a KubeConfig is assignable to it. */
export interface UserKubeConfig {
  getCurrentContext(): string;
  getContextObject(name: string): { readonly user: string; readonly namespace?: string | undefined } | null;
  getCurrentCluster(): { readonly name: string; readonly server: string; readonly proxyUrl?: string | undefined } | null;
  applyToHTTPSOptions(opts: RequestOptions): Promise<void>;
}

export const isUserKubeConfig = (value: unknown): value is UserKubeConfig =>
  typeof value === 'object' &&
  value !== null &&
  ['getCurrentContext', 'getContextObject', 'getCurrentCluster', 'applyToHTTPSOptions'].every(
    (method) => typeof (value as Record<string, unknown>)[method] === 'function',
  );

/** The headers one request carries, as the KubeConfig computes them now. */
async function applied(kc: UserKubeConfig): Promise<{ tls: TlsMaterial; headers: Record<string, string> }> {
  const opts: RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.headers ?? {})) if (value !== undefined) headers[key] = String(value);
  // Basic auth comes back as `auth`, for node:https to encode.
  if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  const { ca, cert, key, rejectUnauthorized, servername } = opts;
  const tls: TlsMaterial = {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(rejectUnauthorized !== undefined ? { rejectUnauthorized } : {}),
    ...(servername ? { servername } : {}),
  };
  return { tls, headers };
}

export async function connectionFromUserKubeConfig(kc: UserKubeConfig, options: ConnectionOptions): Promise<ResolvedConnection> {
  for (const other of ['kubeconfig', 'context', 'inCluster'] as const) {
    if (options[other] !== undefined) {
      throw badSetting(
        options,
        other,
        `cannot be combined with kubeConfig (your KubeConfig object decides the cluster and user): drop '${other}', or choose the context with kubeConfig.setCurrentContext()`,
      );
    }
  }
  const contextName = kc.getCurrentContext();
  const context = kc.getContextObject(contextName);
  const cluster = kc.getCurrentCluster();
  if (!context || !cluster?.server) {
    throw badSetting(
      options,
      'kubeConfig',
      `the KubeConfig has no usable current context ('${contextName}' ${context ? 'has no cluster server' : 'does not exist'}): load one (loadFromDefault(), loadFromFile()) or setCurrentContext() first`,
    );
  }
  const { server, proxy } = clusterAddress(cluster.server, cluster.proxyUrl, (problem, cause) =>
    badSetting(options, 'kubeConfig', `cluster '${cluster.name}' of the KubeConfig ${problem}`, cause),
  );
  let first: Awaited<ReturnType<typeof applied>>;
  try {
    first = await applied(kc);
  } catch (cause) {
    throw badSetting(
      options,
      'kubeConfig',
      `kubeConfig.applyToHTTPSOptions() failed: ${(cause as Error)?.message ?? String(cause)}`,
      cause,
    );
  }
  const credentials: Credentials = {
    // TLS material is read once, for the connection's agent; headers are asked for on every call.
    tls: first.tls,
    headers: async () => (await applied(kc)).headers,
    identity: `user '${context.user}' of context '${contextName}' (the KubeConfig passed in)`,
  };
  return {
    server,
    proxy,
    namespace: options.namespace ?? context.namespace ?? 'default',
    source: `the KubeConfig passed in, context '${contextName}'`,
    credentials,
  };
}
