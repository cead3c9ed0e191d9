/**
 * The `kubeConfig` option: a KubeConfig object from @kubernetes/client-node, given in code (a YAML
 * file cannot hold one). Checked by shape, so validating it loads nothing of client-node; shown as
 * `<redacted>` wherever the effective config is printed, since it holds the user's credentials.
 */
import type { Schema } from '@muster/core/adapter';
import { isUserKubeConfig, type UserKubeConfig } from './user-kube-config.js';

export const kubeConfigOption: Schema<UserKubeConfig> = {
  parse(value, path, issues) {
    if (isUserKubeConfig(value)) return value;
    issues.push({
      path,
      message: `expected a KubeConfig object from @kubernetes/client-node (new KubeConfig(), then loadFromDefault() or loadFromFile()), passed in code${typeof value === 'string' ? '; a kubeconfig file is the kubeconfig option' : ''}`,
    });
    return undefined;
  },
  jsonSchema: () => ({
    description: 'a KubeConfig from @kubernetes/client-node, passed in code; used for every call',
    writeOnly: true,
  }),
};
