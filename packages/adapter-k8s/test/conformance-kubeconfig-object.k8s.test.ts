// The conformance suites with the application's own KubeConfig (@kubernetes/client-node) as the
// kubeConfig option: every call authenticates through it. Counted, so a suite that passed on
// some other connection could not pass here.
import { afterAll, expect } from '@jest/globals';
import type { RequestOptions } from 'node:https';
import { kubernetesConformance } from './k8s-conformance.js';
import { adminConfig, entry } from './k8s-testenv.js';

let applied = 0;
const kubeConfig = entry ? adminConfig() : undefined;
if (kubeConfig) {
  const apply = kubeConfig.applyToHTTPSOptions.bind(kubeConfig);
  kubeConfig.applyToHTTPSOptions = async (opts: RequestOptions) => {
    applied++;
    await apply(opts);
  };
}

kubernetesConformance('KubeConfig object', () => ({ kubeConfig }));

afterAll(() => {
  if (kubeConfig) expect(applied).toBeGreaterThan(100);
});
