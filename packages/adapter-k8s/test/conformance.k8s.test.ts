import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubernetesConformance } from './k8s-conformance.js';
import { entry } from './k8s-testenv.js';

/** The testenv kubeconfig with its server replaced (the discovery clients go through a TCP proxy). */
function kubeconfigFor(server: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'muster-k8s-conformance-')), 'kubeconfig');
  writeFileSync(file, readFileSync(entry!.kubeconfig, 'utf8').replace(entry!.server, server));
  return file;
}

kubernetesConformance(
  'kubeconfig file',
  () => ({ kubeconfig: entry!.kubeconfig }),
  (server) => ({ kubeconfig: kubeconfigFor(server) }),
);
