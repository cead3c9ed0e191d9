// The conformance suites with the application's own KubeConfig (@kubernetes/client-node) as the
// kubeConfig option: every call authenticates through it. Counted, so a suite that passed on
// some other connection could not pass here. The clients under test get a copy whose cluster
// server is the suites' TCP proxy, so the fault and hang cases run here too.
import { afterAll, expect } from '@jest/globals';
import type { RequestOptions } from 'node:https';
import type * as k8s from '@kubernetes/client-node';
import { kubernetesConformance } from './k8s-conformance.js';
import { adminConfig, entry } from './k8s-testenv.js';

let applied = 0;

function counted(kubeConfig: k8s.KubeConfig): k8s.KubeConfig {
  const apply = kubeConfig.applyToHTTPSOptions.bind(kubeConfig);
  kubeConfig.applyToHTTPSOptions = async (opts: RequestOptions) => {
    applied++;
    await apply(opts);
  };
  return kubeConfig;
}

/** The admin KubeConfig with every cluster's server replaced by `server`. */
function via(server: string): k8s.KubeConfig {
  const kubeConfig = adminConfig();
  kubeConfig.loadFromOptions({
    clusters: kubeConfig.clusters.map((c) => ({ ...c, server })),
    users: kubeConfig.users,
    contexts: kubeConfig.contexts,
    currentContext: kubeConfig.currentContext,
  });
  return counted(kubeConfig);
}

const kubeConfig = entry ? counted(adminConfig()) : undefined;

kubernetesConformance(
  'KubeConfig object',
  () => ({ kubeConfig }),
  (server) => ({ kubeConfig: via(server) }),
);

afterAll(() => {
  if (kubeConfig) expect(applied).toBeGreaterThan(100);
});
