import { InvalidArgumentError } from '@muster/core';
import { configFileProfile } from './config-file.js';
import { consulProfile, type ConsulServer } from './consul.js';
import { kubernetesProfile, type KubernetesServer } from './kubernetes.js';
import type { BackendProfile } from './profile.js';
import { sharedServer } from './shared-server.js';
import { staticProfile } from './static.js';

export interface ProfileChoice {
  readonly seed: number;
  readonly ttl?: number;
  /** Use the running testenv server instead of starting a private one. */
  readonly shared: boolean;
}

/**
 * The profile for an adapter name (`static`, `kubernetes`, `consul`, `consul-persist`), a Muster config file (any
 * adapter, contenders in separate processes) or an in-process adapter module (as static).
 */
export async function profileFor(adapter: string, choice: ProfileChoice): Promise<BackendProfile> {
  const runId = `${choice.seed.toString(36)}${process.pid.toString(36)}`;
  const ttl = choice.ttl !== undefined ? { ttl: choice.ttl } : {};
  switch (adapter) {
    case 'static':
      return staticProfile({ runId, ...ttl });
    case 'kubernetes':
    case 'k8s':
      return kubernetesProfile({ runId, ...ttl, ...(choice.shared ? { server: sharedServer<KubernetesServer>('k8s') } : {}) });
    case 'consul':
      return consulProfile({ runId, ...ttl, ...(choice.shared ? { server: sharedServer<ConsulServer>('consul') } : {}) });
    case 'consul-persist':
      return consulProfile({ runId, ...ttl, persistent: true });
    default:
      if (/\.(ya?ml|json)$/.test(adapter)) return configFileProfile({ runId, file: adapter, ...ttl });
      if (adapter.startsWith('/') || adapter.startsWith('file:')) return staticProfile({ runId, ...ttl, adapter });
      throw new InvalidArgumentError(
        `adapter '${adapter}': expected static, kubernetes, consul, consul-persist, a Muster config file (./muster.yaml) or a path to an in-process adapter module (./my-adapter.js)`,
      );
  }
}
