/**
 * Reading kubeconfig files, one or a `KUBECONFIG` list, merged as kubectl merges them: the first
 * file to name a cluster, user or context wins it whole (entries are never merged field by
 * field), the first file that sets `current-context` wins it, files that do not exist are
 * skipped, and relative paths in an entry resolve from the file that holds it.
 */
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { badSetting, type ConnectionOptions } from './connection.js';

export interface ContextSpec {
  cluster?: string;
  user?: string;
  namespace?: string;
}

export interface ClusterSpec {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
}

export interface UserSpec {
  token?: string;
  tokenFile?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  'auth-provider'?: unknown;
}

/** One named entry and the file it came from (its folder anchors relative paths). */
export interface Entry<T> {
  readonly spec: T;
  readonly file: string;
}

export interface Kubeconfig {
  /** The files read, in order (for messages). */
  readonly files: readonly string[];
  readonly currentContext: string | undefined;
  readonly contexts: ReadonlyMap<string, Entry<ContextSpec>>;
  readonly clusters: ReadonlyMap<string, Entry<ClusterSpec>>;
  readonly users: ReadonlyMap<string, Entry<UserSpec>>;
}

type FileShape = {
  'current-context'?: string;
  contexts?: { name: string; context?: ContextSpec }[];
  clusters?: { name: string; cluster?: ClusterSpec }[];
  users?: { name: string; user?: UserSpec }[];
};

/** The folder relative paths in an entry resolve from. */
export const entryDir = (entry: Entry<unknown>): string => dirname(entry.file);

/**
 * Reads and merges `paths` in order. `skipMissing` (a KUBECONFIG list) passes over files that do
 * not exist; returns undefined when none does.
 */
export async function readKubeconfigs(
  paths: readonly string[],
  options: ConnectionOptions,
  { skipMissing }: { skipMissing: boolean },
): Promise<Kubeconfig | undefined> {
  const texts: [string, string][] = [];
  for (const path of paths) {
    try {
      texts.push([path, readFileSync(path, 'utf8')]);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code;
      if (skipMissing && code === 'ENOENT') continue;
      throw badSetting(options, 'kubeconfig', `cannot read kubeconfig ${path} (${code ?? String(cause)})`, cause);
    }
  }
  if (texts.length === 0) return undefined;
  // Loaded only here: in-cluster config and a user's KubeConfig never pay for the YAML parser.
  const { parse } = await import('yaml');
  let currentContext: string | undefined;
  const contexts = new Map<string, Entry<ContextSpec>>();
  const clusters = new Map<string, Entry<ClusterSpec>>();
  const users = new Map<string, Entry<UserSpec>>();
  const keepFirst = <T>(into: Map<string, Entry<T>>, name: string | undefined, spec: T | undefined, file: string) => {
    if (name !== undefined && !into.has(name)) into.set(name, { spec: spec ?? ({} as T), file });
  };
  for (const [file, text] of texts) {
    let config: FileShape;
    try {
      config = (parse(text) ?? {}) as FileShape;
    } catch (cause) {
      throw badSetting(options, 'kubeconfig', `${file} is not valid YAML: ${(cause as Error).message.split('\n')[0]}`, cause);
    }
    currentContext ||= config['current-context'] || undefined;
    for (const c of config.contexts ?? []) keepFirst(contexts, c.name, c.context, file);
    for (const c of config.clusters ?? []) keepFirst(clusters, c.name, c.cluster, file);
    for (const u of config.users ?? []) keepFirst(users, u.name, u.user, file);
  }
  return { files: texts.map(([file]) => file), currentContext, contexts, clusters, users };
}
