/** A connection from a kubeconfig (one file or a merged KUBECONFIG list): its context, cluster and user. */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { badSetting, type ConnectionOptions, type Credentials, type ResolvedConnection, type TlsMaterial } from './connection.js';
import { basicAuth, bearerToken, bearerTokenFile, noHeaders } from './credentials.js';
import { entryDir, type Kubeconfig } from './kubeconfig-files.js';
import { clusterAddress } from './cluster-address.js';

export async function connectionFromKubeconfig(config: Kubeconfig, options: ConnectionOptions): Promise<ResolvedConnection> {
  const where = config.files.join(':');
  const names = [...config.contexts.keys()].join(', ') || 'none';
  const contextName = options.context ?? config.currentContext;
  if (!contextName) {
    throw badSetting(options, 'context', `${where} has no current-context; set the context option (contexts: ${names})`);
  }
  const context = config.contexts.get(contextName)?.spec;
  if (!context) throw badSetting(options, 'context', `${where} has no context '${contextName}' (contexts: ${names})`);
  const clusterEntry = context.cluster === undefined ? undefined : config.clusters.get(context.cluster);
  const cluster = clusterEntry?.spec;
  if (!clusterEntry || !cluster?.server) {
    throw badSetting(options, 'kubeconfig', `${where}: context '${contextName}' names cluster '${context.cluster}', which has no server`);
  }
  const { server, proxy } = clusterAddress(cluster.server, cluster['proxy-url'], (problem, cause) =>
    badSetting(options, 'kubeconfig', `${clusterEntry.file}: cluster '${context.cluster}' ${problem}`, cause),
  );
  const userEntry = context.user === undefined ? undefined : config.users.get(context.user);
  const user = userEntry?.spec ?? {};
  const fileIn = (dir: string, p: string) => readFileSync(isAbsolute(p) ? p : resolve(dir, p));
  const data = (b64: string) => Buffer.from(b64, 'base64');
  const clusterDir = entryDir(clusterEntry);
  const userDir = userEntry ? entryDir(userEntry) : clusterDir;
  const tls: TlsMaterial = {
    ...(cluster['certificate-authority-data'] ? { ca: data(cluster['certificate-authority-data']) } : {}),
    ...(cluster['certificate-authority'] ? { ca: fileIn(clusterDir, cluster['certificate-authority']) } : {}),
    ...(cluster['insecure-skip-tls-verify'] ? { rejectUnauthorized: false } : {}),
    ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
    ...(user['client-certificate-data'] ? { cert: data(user['client-certificate-data']) } : {}),
    ...(user['client-certificate'] ? { cert: fileIn(userDir, user['client-certificate']) } : {}),
    ...(user['client-key-data'] ? { key: data(user['client-key-data']) } : {}),
    ...(user['client-key'] ? { key: fileIn(userDir, user['client-key']) } : {}),
  };
  const who = { tls, identity: `user '${context.user}' of context '${contextName}'` };
  let credentials: Credentials;
  if ((user.exec || user['auth-provider']) && userEntry) {
    // Loaded only for these users: client-node runs the plugin and caches its tokens.
    const { pluginCredentials } = await import('./plugin-credentials.js');
    credentials = await pluginCredentials({ name: context.user!, spec: user, dir: userDir }, who, options);
  } else if (user.token) {
    credentials = bearerToken(user.token, who);
  } else if (user.tokenFile) {
    credentials = bearerTokenFile(isAbsolute(user.tokenFile) ? user.tokenFile : resolve(userDir, user.tokenFile), who);
  } else if (user.username !== undefined) {
    credentials = basicAuth(user.username, user.password ?? '', who);
  } else {
    credentials = noHeaders(who);
  }
  return {
    server,
    proxy,
    namespace: options.namespace ?? context.namespace ?? 'default',
    source: `kubeconfig ${where}, context '${contextName}'`,
    credentials,
  };
}
