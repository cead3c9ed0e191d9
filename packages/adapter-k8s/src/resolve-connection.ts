/**
 * Finds the cluster, in this order: a KubeConfig passed in; in-cluster config when asked for; an
 * explicit kubeconfig file; in-cluster config when running in a pod; the $KUBECONFIG list (merged
 * as kubectl merges it); ~/.kube/config. Unlike client-node's loadFromDefault(), nothing falls back
 * silently to http://localhost:8080: when nothing is found, the error says what was tried.
 */
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { badSetting, type ConnectionOptions, type ResolvedConnection } from './connection.js';
import { loadInCluster } from './in-cluster.js';
import { connectionFromKubeconfig } from './kubeconfig.js';
import { readKubeconfigs } from './kubeconfig-files.js';
import { connectionFromUserKubeConfig } from './user-kube-config.js';

export async function resolveConnection(options: ConnectionOptions): Promise<ResolvedConnection> {
  const env = options.env ?? process.env;
  if (options.kubeConfig) return connectionFromUserKubeConfig(options.kubeConfig, options);
  if (options.inCluster === true) return loadInCluster(options, env);
  if (options.kubeconfig) {
    const config = await readKubeconfigs([resolve(options.baseDir, options.kubeconfig)], options, { skipMissing: false });
    return connectionFromKubeconfig(config!, options);
  }
  if (options.inCluster !== false && env.KUBERNETES_SERVICE_HOST) return loadInCluster(options, env);
  const fromEnv = env.KUBECONFIG?.split(process.platform === 'win32' ? ';' : ':').filter((p) => p.length > 0) ?? [];
  const candidates = fromEnv.length > 0 ? fromEnv.map((p) => resolve(p)) : [resolve(env.HOME ?? homedir(), '.kube', 'config')];
  const config = await readKubeconfigs(candidates, options, { skipMissing: true });
  if (config) return connectionFromKubeconfig(config, options);
  throw badSetting(
    options,
    'kubeconfig',
    `no Kubernetes cluster configured: not in a pod (KUBERNETES_SERVICE_HOST unset), no kubeconfig option, and ${fromEnv.length > 0 ? `none of KUBECONFIG=${fromEnv.join(':')} exists` : `${candidates[0]} does not exist`}; set kubeconfig (and context) in the adapter options`,
  );
}
