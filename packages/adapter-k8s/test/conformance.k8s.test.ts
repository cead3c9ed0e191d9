import { kubernetesConformance } from './k8s-conformance.js';
import { entry } from './k8s-testenv.js';

kubernetesConformance('kubeconfig file', () => ({ kubeconfig: entry!.kubeconfig }));
