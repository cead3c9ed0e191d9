/**
 * What a connection to the API server is made of once resolved (where it is, how we prove who we
 * are, which namespace), and the options users set to choose it.
 */
import type { RequestOptions } from 'node:https';
import { InvalidArgumentError } from '@muster/core';
import type { UserKubeConfig } from './user-kube-config.js';

export interface ConnectionOptions {
  /** A kubeconfig file; relative paths resolve from `baseDir`. */
  readonly kubeconfig?: string | undefined;
  /** A KubeConfig from @kubernetes/client-node, built by the application; used for every call. */
  readonly kubeConfig?: UserKubeConfig | undefined;
  /** The kubeconfig context to use (default: its current-context). */
  readonly context?: string | undefined;
  /** Overrides the namespace of the context or of the pod. */
  readonly namespace?: string | undefined;
  /** true: only in-cluster config; false: never; undefined: in a pod unless a kubeconfig is given. */
  readonly inCluster?: boolean | undefined;
  /** Time limit of one non-watch request (ms). */
  readonly requestTimeout?: number | undefined;
  readonly baseDir: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where the service-account files are (tests point it elsewhere). */
  readonly serviceAccountDir?: string;
  /** Names an option for messages (the config's file:line:col and path); default `option 'x'`. */
  readonly describe?: (option: string) => string;
}

/** TLS settings of the connection, applied to its agent once. */
export type TlsMaterial = Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/** How each request proves who we are. */
export interface Credentials {
  readonly tls: TlsMaterial;
  /** Headers for one request; may re-read a rotated token file or run an exec plugin. */
  headers(): Promise<Record<string, string>>;
  /**
   * Called after a 401: look again (a token file the kubelet or an operator rotated). Resolves
   * true when the next headers() differ, so the rejected request is worth sending once more.
   */
  refresh?(): Promise<boolean>;
  /** Who we are, for error messages. */
  readonly identity: string;
}

export interface ResolvedConnection {
  /** https:// or http:// (a plain-HTTP server such as `kubectl proxy`). */
  readonly server: URL;
  /** The kubeconfig cluster's `proxy-url`: requests go through this HTTP proxy. */
  readonly proxy?: URL | undefined;
  readonly namespace: string;
  readonly credentials: Credentials;
  /** Where the settings came from, for messages. */
  readonly source: string;
}

/** A connection setting that cannot work; the message names the option and the fix. */
export function badSetting(options: ConnectionOptions, option: string, problem: string, cause?: unknown): InvalidArgumentError {
  const where = options.describe ? options.describe(option) : `kubernetes adapter option '${option}'`;
  const error = new InvalidArgumentError(`${where}: ${problem}`);
  if (cause !== undefined) Object.defineProperty(error, 'cause', { value: cause });
  return error;
}
