/**
 * The connection to the Kubernetes API server: where it is, who we are, and the few REST calls the
 * adapter makes (get, list, create, replace, delete, watch) as JSON over node:https.
 *
 * Why not @kubernetes/client-node's generated API classes: every one of them imports the
 * ObjectSerializer and with it all ~700 models, and KubeConfig imports the whole generated client;
 * measured here that is 35 % (one API class) to 70 % (KubeConfig) of the full import, far over the
 * cold-start budget. The calls we make are plain JSON, so they are written here on node:https, and
 * the library is imported (lazily, whole) only for kubeconfig users that authenticate through an
 * `exec` plugin or an `auth-provider`, which it implements and we do not.
 */
import { readFileSync, statSync } from 'node:fs';
import { Agent, request, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { BackendError, InvalidArgumentError, MusterError } from '@muster/core';
import { abortErrorFrom } from '@muster/core/adapter';

/** Where in-cluster credentials live in every pod that mounts a service-account token. */
export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The Role that grants exactly what this adapter does; named in every 403 message. */
const rbacHint = 'grant it with the Role in deploy/kubernetes/rbac.yaml (get/list/watch endpointslices; get/create/update leases)';

export interface ConnectionOptions {
  /** A kubeconfig file; relative paths resolve from `baseDir`. */
  readonly kubeconfig?: string | undefined;
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

/** A connection setting that cannot work; the message names the option and the fix. */
function badSetting(options: ConnectionOptions, option: string, problem: string, cause?: unknown): InvalidArgumentError {
  const where = options.describe ? options.describe(option) : `kubernetes adapter option '${option}'`;
  const error = new InvalidArgumentError(`${where}: ${problem}`);
  if (cause !== undefined) Object.defineProperty(error, 'cause', { value: cause });
  return error;
}

/** A resource type the adapter uses, with the words RBAC and error messages use for it. */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

export const leases: ResourceType = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' };
export const endpointSlices: ResourceType = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices' };

const resourceName = (r: ResourceType) => (r.group ? `${r.plural}.${r.group}` : r.plural);

/** The common part of every object we read. */
export interface KubeObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
}

export interface WatchEvent<T> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  readonly object: T;
}

/** A Kubernetes API failure: the HTTP status, the Status `reason`, the verb and the resource. */
export class KubernetesError extends BackendError {
  readonly reason: string | undefined;
  readonly verb: string;
  readonly resource: string;
  constructor(verb: string, resource: string, message: string, options: { status?: number; reason?: string; cause?: unknown }) {
    super('kubernetes', message, options);
    this.reason = options.reason;
    this.verb = verb;
    this.resource = resource;
  }
}

/** The resourceVersion we asked for is older than what the server keeps: relist. */
export const isGone = (error: unknown): boolean => error instanceof KubernetesError && error.status === 410;
export const isConflict = (error: unknown): boolean => error instanceof KubernetesError && error.status === 409;

interface StatusBody {
  kind?: string;
  reason?: string;
  message?: string;
  code?: number;
  details?: { kind?: string; name?: string };
}

function parseStatus(body: unknown): StatusBody | undefined {
  if (typeof body === 'string') {
    try {
      return parseStatus(JSON.parse(body));
    } catch {
      return body ? { message: body.slice(0, 300) } : undefined;
    }
  }
  return typeof body === 'object' && body !== null ? (body as StatusBody) : undefined;
}

/**
 * Turns a failed call into our error, naming what was attempted. Accepts an HTTP status with the
 * response body, or @kubernetes/client-node's ApiException (`code` and `body` as a JSON string),
 * so errors read the same whichever path made the call.
 */
export function kubernetesError(
  verb: string,
  resource: ResourceType,
  target: { namespace: string; name?: string | undefined; identity?: string | undefined },
  failure: { status: number; body: unknown; cause?: unknown } | { code: number; body: unknown },
): KubernetesError {
  const status = 'status' in failure ? failure.status : failure.code;
  const body = parseStatus(failure.body);
  const what = `${verb} ${resourceName(resource)}${target.name ? ` '${target.name}'` : ''} in namespace '${target.namespace}'`;
  const server = body?.message ?? `HTTP ${status}`;
  let message: string;
  if (status === 401) {
    message = `${what}: the API server rejected the credentials (401 Unauthorized): check the token or client certificate of the kubeconfig user, or that the service-account token is current`;
  } else if (status === 403) {
    message = `${what}: forbidden by RBAC${target.identity ? ` for ${target.identity}` : ''} (403): ${rbacHint}. Server said: ${server}`;
  } else if (status === 404 && body?.details?.kind === 'namespaces') {
    message = `${what}: namespace '${target.namespace}' does not exist; create it or set the adapter's namespace option`;
  } else {
    message = `${what}: ${status}${body?.reason ? ` ${body.reason}` : ''}: ${server}`;
  }
  return new KubernetesError(verb, resourceName(resource), message, {
    status,
    ...(body?.reason ? { reason: body.reason } : {}),
    cause: 'cause' in failure ? failure.cause : failure,
  });
}

/** How each request proves who we are. */
interface Credentials {
  /** Static TLS material, applied to the agent once. */
  readonly tls: Pick<RequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;
  /** Headers for one request; may re-read a rotated token file or run an exec plugin. */
  headers(): Promise<Record<string, string>>;
  /** Who we are, for error messages. */
  readonly identity: string;
}

export interface ResolvedConnection {
  readonly server: URL;
  readonly namespace: string;
  readonly credentials: Credentials;
  /** Where the settings came from, for messages. */
  readonly source: string;
}

/** Re-reads a token file at most once a minute and whenever it changes (kubelet rotates projected tokens). */
function tokenFromFile(path: string): () => string {
  let token = '';
  let mtime = -1;
  let checkedAt = 0;
  return () => {
    const now = Date.now();
    if (token && now - checkedAt < 60_000) return token;
    checkedAt = now;
    const stat = statSync(path);
    if (stat.mtimeMs !== mtime) {
      token = readFileSync(path, 'utf8').trim();
      mtime = stat.mtimeMs;
    }
    return token;
  };
}

function readable(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

function loadInCluster(options: ConnectionOptions, env: Readonly<Record<string, string | undefined>>): ResolvedConnection {
  const dir = options.serviceAccountDir ?? serviceAccountDir;
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  if (!host) {
    throw badSetting(
      options,
      'inCluster',
      'in-cluster config needs KUBERNETES_SERVICE_HOST, which Kubernetes sets in every pod; this process does not run in a pod: set kubeconfig (and context) instead',
    );
  }
  const tokenPath = `${dir}/token`;
  if (!readable(tokenPath)) {
    throw badSetting(
      options,
      'inCluster',
      `no service-account token at ${tokenPath}: the pod does not mount one (automountServiceAccountToken: false?); mount it or set kubeconfig`,
    );
  }
  let namespace = options.namespace;
  if (!namespace) {
    try {
      namespace = readFileSync(`${dir}/namespace`, 'utf8').trim();
    } catch {
      throw badSetting(options, 'namespace', `${dir}/namespace is missing; set the namespace option`);
    }
  }
  const token = tokenFromFile(tokenPath);
  const caPath = `${dir}/ca.crt`;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    server: new URL(`https://${hostPart}:${port}`),
    namespace,
    source: `in-cluster config (${dir})`,
    credentials: {
      tls: readable(caPath) ? { ca: readFileSync(caPath) } : {},
      headers: async () => ({ Authorization: `Bearer ${token()}` }),
      identity: "the pod's service account",
    },
  };
}

type Kubeconfig = {
  'current-context'?: string;
  contexts?: { name: string; context?: { cluster?: string; user?: string; namespace?: string } }[];
  clusters?: {
    name: string;
    cluster?: {
      server?: string;
      'certificate-authority'?: string;
      'certificate-authority-data'?: string;
      'insecure-skip-tls-verify'?: boolean;
      'tls-server-name'?: string;
      'proxy-url'?: string;
    };
  }[];
  users?: {
    name: string;
    user?: {
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
    };
  }[];
};

async function loadKubeconfig(path: string, options: ConnectionOptions): Promise<ResolvedConnection> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw badSetting(
      options,
      'kubeconfig',
      `cannot read kubeconfig ${path} (${(cause as NodeJS.ErrnoException).code ?? String(cause)})`,
      cause,
    );
  }
  // Loaded only here: in-cluster config never pays for the YAML parser.
  const { parse } = await import('yaml');
  let config: Kubeconfig;
  try {
    config = (parse(text) ?? {}) as Kubeconfig;
  } catch (cause) {
    throw badSetting(options, 'kubeconfig', `${path} is not valid YAML: ${(cause as Error).message.split('\n')[0]}`, cause);
  }
  const contextName = options.context ?? config['current-context'];
  const contexts = config.contexts ?? [];
  if (!contextName) {
    throw badSetting(
      options,
      'context',
      `${path} has no current-context; set the context option (contexts: ${contexts.map((c) => c.name).join(', ') || 'none'})`,
    );
  }
  const context = contexts.find((c) => c.name === contextName)?.context;
  if (!context) {
    throw badSetting(
      options,
      'context',
      `${path} has no context '${contextName}' (contexts: ${contexts.map((c) => c.name).join(', ') || 'none'})`,
    );
  }
  const cluster = config.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster?.server)
    throw badSetting(options, 'kubeconfig', `${path}: context '${contextName}' names cluster '${context.cluster}', which has no server`);
  if (cluster['proxy-url'])
    throw badSetting(
      options,
      'kubeconfig',
      `${path}: cluster '${context.cluster}' uses proxy-url, which this adapter does not support; connect directly`,
    );
  const server = new URL(cluster.server);
  if (server.protocol !== 'https:') {
    throw badSetting(
      options,
      'kubeconfig',
      `${path}: cluster '${context.cluster}' has server ${cluster.server}; only https:// API servers are supported`,
    );
  }
  const user = config.users?.find((u) => u.name === context.user)?.user ?? {};
  const dir = dirname(path);
  const file = (p: string) => readFileSync(isAbsolute(p) ? p : resolve(dir, p));
  const data = (b64: string) => Buffer.from(b64, 'base64');
  const tls: Credentials['tls'] = {
    ...(cluster['certificate-authority-data'] ? { ca: data(cluster['certificate-authority-data']) } : {}),
    ...(cluster['certificate-authority'] ? { ca: file(cluster['certificate-authority']) } : {}),
    ...(cluster['insecure-skip-tls-verify'] ? { rejectUnauthorized: false } : {}),
    ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
    ...(user['client-certificate-data'] ? { cert: data(user['client-certificate-data']) } : {}),
    ...(user['client-certificate'] ? { cert: file(user['client-certificate']) } : {}),
    ...(user['client-key-data'] ? { key: data(user['client-key-data']) } : {}),
    ...(user['client-key'] ? { key: file(user['client-key']) } : {}),
  };
  let headers: Credentials['headers'];
  if (user.exec || user['auth-provider']) {
    headers = await pluginHeaders(path, contextName);
  } else if (user.token) {
    const token = user.token;
    headers = async () => ({ Authorization: `Bearer ${token}` });
  } else if (user.tokenFile) {
    const token = tokenFromFile(isAbsolute(user.tokenFile) ? user.tokenFile : resolve(dir, user.tokenFile));
    headers = async () => ({ Authorization: `Bearer ${token()}` });
  } else if (user.username !== undefined) {
    const basic = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
    headers = async () => ({ Authorization: basic });
  } else {
    headers = async () => ({});
  }
  return {
    server,
    namespace: options.namespace ?? context.namespace ?? 'default',
    source: `kubeconfig ${path}, context '${contextName}'`,
    credentials: { tls, headers, identity: `user '${context.user}' of context '${contextName}'` },
  };
}

/**
 * Exec plugins (aws, gke-gcloud-auth-plugin, kubelogin) and auth providers: @kubernetes/client-node
 * runs them and caches their tokens; we take the Authorization header it computes per request.
 */
async function pluginHeaders(path: string, context: string): Promise<Credentials['headers']> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  kc.setCurrentContext(context);
  return async (): Promise<Record<string, string>> => {
    const opts: RequestOptions = {};
    await kc.applyToHTTPSOptions(opts);
    const auth = (opts.headers as Record<string, string> | undefined)?.Authorization;
    return auth ? { Authorization: auth } : {};
  };
}

/**
 * Finds the cluster: an explicit kubeconfig; else in-cluster config when running in a pod; else
 * $KUBECONFIG (its first file) or ~/.kube/config. Unlike client-node's loadFromDefault(), nothing
 * falls back silently to http://localhost:8080: when nothing is found, the error says what was tried.
 */
export async function resolveConnection(options: ConnectionOptions): Promise<ResolvedConnection> {
  const env = options.env ?? process.env;
  if (options.inCluster === true) return loadInCluster(options, env);
  if (options.kubeconfig) return loadKubeconfig(resolve(options.baseDir, options.kubeconfig), options);
  if (options.inCluster !== false && env.KUBERNETES_SERVICE_HOST) return loadInCluster(options, env);
  const fromEnv = env.KUBECONFIG?.split(process.platform === 'win32' ? ';' : ':').find((p) => p.length > 0);
  const home = resolve(env.HOME ?? homedir(), '.kube', 'config');
  const candidate = fromEnv ?? home;
  if (readable(candidate)) return loadKubeconfig(candidate, options);
  throw badSetting(
    options,
    'kubeconfig',
    `no Kubernetes cluster configured: not in a pod (KUBERNETES_SERVICE_HOST unset), no kubeconfig option, and ${fromEnv ? `KUBECONFIG=${fromEnv}` : home} does not exist; set kubeconfig (and context) in the adapter options`,
  );
}

const isAbort = (error: unknown) => (error as { name?: string })?.name === 'AbortError' || MusterError.is(error, 'MUSTER_ABORTED');

/** What to say when the API server could not be reached at all. */
function unreachable(verb: string, resource: ResourceType, server: URL, namespace: string, cause: unknown): KubernetesError {
  const code = (cause as NodeJS.ErrnoException)?.code;
  return new KubernetesError(
    verb,
    resourceName(resource),
    `${verb} ${resourceName(resource)} in namespace '${namespace}': cannot reach the API server at ${server.origin} (${code ?? (cause as Error)?.message ?? String(cause)})`,
    { cause },
  );
}

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
}

export interface ListResult<T> {
  readonly items: T[];
  readonly resourceVersion: string;
}

/**
 * A connection to one namespace of one API server. Sockets are kept alive between calls and do
 * not keep the process alive while idle; close() destroys them.
 */
export class KubeClient {
  readonly namespace: string;
  readonly server: URL;
  readonly source: string;
  readonly #credentials: Credentials;
  readonly #agent: Agent;
  readonly #requestTimeout: number;
  readonly #watchIdleTimeout: number;
  readonly #closing = new AbortController();

  constructor(
    connection: ResolvedConnection,
    options: { requestTimeout?: number | undefined; watchIdleTimeout?: number | undefined } = {},
  ) {
    this.namespace = connection.namespace;
    this.server = connection.server;
    this.source = connection.source;
    this.#credentials = connection.credentials;
    this.#requestTimeout = options.requestTimeout ?? 30_000;
    this.#watchIdleTimeout = options.watchIdleTimeout ?? 90_000;
    // No socket limit: every open watch holds a connection of its own.
    this.#agent = new Agent({ keepAlive: true, keepAliveMsecs: 15_000, ...connection.credentials.tls });
  }

  #path(resource: ResourceType, name?: string, query?: Record<string, string | number | boolean | undefined>): string {
    const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
    let path = `${base}/namespaces/${encodeURIComponent(this.namespace)}/${resource.plural}${name ? `/${encodeURIComponent(name)}` : ''}`;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    if (qs) path += `?${qs}`;
    return path;
  }

  async #send(method: string, path: string, body: unknown, signal: AbortSignal): Promise<IncomingMessage> {
    const headers: Record<string, string> = { Accept: 'application/json', ...(await this.#credentials.headers()) };
    let payload: Buffer | undefined;
    if (body !== undefined) {
      payload = Buffer.from(JSON.stringify(body));
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    return new Promise((resolveResponse, reject) => {
      const req = request(
        {
          protocol: 'https:',
          hostname: this.server.hostname.replace(/^\[|\]$/g, ''),
          port: this.server.port || 443,
          path,
          method,
          headers,
          agent: this.#agent,
          signal,
        },
        resolveResponse,
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** One non-watch call; parses the JSON answer, maps failures to KubernetesError. */
  async #call<T>(
    verb: string,
    resource: ResourceType,
    method: string,
    path: string,
    name: string | undefined,
    body: unknown,
    options: CallOptions,
  ): Promise<T> {
    if (this.#closing.signal.aborted) throw abortErrorFrom(this.#closing.signal, `${verb} ${resourceName(resource)}`);
    const signal = AbortSignal.any([
      AbortSignal.timeout(this.#requestTimeout),
      this.#closing.signal,
      ...(options.signal ? [options.signal] : []),
    ]);
    let res: IncomingMessage;
    let text: string;
    try {
      res = await this.#send(method, path, body, signal);
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      text = Buffer.concat(chunks).toString('utf8');
    } catch (cause) {
      if (options.signal?.aborted || this.#closing.signal.aborted)
        throw abortErrorFrom(options.signal?.aborted ? options.signal : this.#closing.signal, `${verb} ${resourceName(resource)}`);
      if (isAbort(cause)) {
        throw new KubernetesError(
          verb,
          resourceName(resource),
          `${verb} ${resourceName(resource)} in namespace '${this.namespace}': no answer from ${this.server.origin} within ${this.#requestTimeout} ms`,
          { cause },
        );
      }
      throw unreachable(verb, resource, this.server, this.namespace, cause);
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      throw kubernetesError(
        verb,
        resource,
        { namespace: this.namespace, name, identity: this.#credentials.identity },
        { status, body: text },
      );
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject>(resource: ResourceType, name: string, options: CallOptions = {}): Promise<T | undefined> {
    try {
      return await this.#call<T>('get', resource, 'GET', this.#path(resource, name), name, undefined, options);
    } catch (error) {
      if (error instanceof KubernetesError && error.status === 404) return undefined;
      throw error;
    }
  }

  async list<T extends KubeObject>(resource: ResourceType, options: CallOptions & { labelSelector?: string } = {}): Promise<ListResult<T>> {
    const list = await this.#call<{ items?: T[]; metadata?: { resourceVersion?: string } }>(
      'list',
      resource,
      'GET',
      this.#path(resource, undefined, { labelSelector: options.labelSelector }),
      undefined,
      undefined,
      options,
    );
    return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  create<T extends KubeObject>(resource: ResourceType, body: T, options: CallOptions = {}): Promise<T> {
    return this.#call<T>('create', resource, 'POST', this.#path(resource), body.metadata?.name, body, options);
  }

  /** PUT with the body's resourceVersion: 409 Conflict when somebody else wrote first. */
  replace<T extends KubeObject>(resource: ResourceType, body: T, options: CallOptions = {}): Promise<T> {
    const name = body.metadata?.name;
    if (!name) throw new InvalidArgumentError('replace(): the object has no metadata.name');
    return this.#call<T>('update', resource, 'PUT', this.#path(resource, name), name, body, options);
  }

  /** Deletes; a missing object is not an error. With `resourceVersion`, only that version is deleted. */
  async delete(resource: ResourceType, name: string, options: CallOptions & { resourceVersion?: string } = {}): Promise<void> {
    const body = options.resourceVersion
      ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: options.resourceVersion } }
      : undefined;
    try {
      await this.#call('delete', resource, 'DELETE', this.#path(resource, name), name, body, options);
    } catch (error) {
      if (error instanceof KubernetesError && error.status === 404) return;
      throw error;
    }
  }

  /**
   * Watches from `resourceVersion`, asking for bookmarks. Ends normally when the server closes the
   * watch (its timeout); throws KubernetesError on an ERROR event (410 Gone: relist) or a broken
   * stream. The caller owns the loop around it.
   */
  async *watch<T extends KubeObject>(
    resource: ResourceType,
    options: CallOptions & { labelSelector?: string; resourceVersion: string; timeoutSeconds: number },
  ): AsyncGenerator<WatchEvent<T>> {
    const verb = 'watch';
    const path = this.#path(resource, undefined, {
      watch: 1,
      labelSelector: options.labelSelector,
      resourceVersion: options.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: options.timeoutSeconds,
    });
    // The server ends the watch after timeoutSeconds and sends bookmarks about once a minute; a
    // connection silent for longer (a peer gone without a FIN) is ended here like a normal close,
    // so the caller re-watches from its resourceVersion and a dead server shows up as a failed
    // reconnect.
    const stop = new AbortController();
    let quiet = false;
    const endQuietly = () => {
      quiet = true;
      stop.abort();
    };
    const deadline = setTimeout(endQuietly, (options.timeoutSeconds + 30) * 1000).unref();
    let idle = setTimeout(endQuietly, this.#watchIdleTimeout).unref();
    const signal = AbortSignal.any([stop.signal, this.#closing.signal, ...(options.signal ? [options.signal] : [])]);
    const aborted = () => quiet || options.signal?.aborted || this.#closing.signal.aborted;
    let res: IncomingMessage;
    try {
      res = await this.#send('GET', path, undefined, signal);
    } catch (cause) {
      clearTimeout(deadline);
      clearTimeout(idle);
      if (aborted()) return;
      throw unreachable(verb, resource, this.server, this.namespace, cause);
    }
    try {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        const chunks: Buffer[] = [];
        for await (const chunk of res) chunks.push(chunk as Buffer);
        throw kubernetesError(
          verb,
          resource,
          { namespace: this.namespace, identity: this.#credentials.identity },
          { status, body: Buffer.concat(chunks).toString('utf8') },
        );
      }
      // Attached in the same tick as readline, so both see every chunk.
      res.on('data', () => {
        clearTimeout(idle);
        idle = setTimeout(endQuietly, this.#watchIdleTimeout).unref();
      });
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      try {
        for await (const line of lines) {
          if (!line.trim()) continue;
          const event = JSON.parse(line) as { type: string; object: unknown };
          if (event.type === 'ERROR') {
            const st = parseStatus(event.object);
            throw kubernetesError(
              verb,
              resource,
              { namespace: this.namespace, identity: this.#credentials.identity },
              { status: st?.code ?? 500, body: st },
            );
          }
          yield event as WatchEvent<T>;
        }
      } catch (cause) {
        if (aborted()) return;
        if (cause instanceof KubernetesError) throw cause;
        throw new KubernetesError(
          verb,
          resourceName(resource),
          `watch ${resourceName(resource)} in namespace '${this.namespace}': the stream broke (${(cause as Error)?.message ?? String(cause)})`,
          { cause },
        );
      }
      if (aborted()) return;
      if (!res.complete) {
        throw new KubernetesError(
          verb,
          resourceName(resource),
          `watch ${resourceName(resource)} in namespace '${this.namespace}': the stream ended before the server finished it`,
          {},
        );
      }
    } finally {
      clearTimeout(deadline);
      clearTimeout(idle);
      stop.abort();
      res.destroy();
    }
  }

  /** Ends every call in flight and drops the kept-alive sockets. */
  close(): void {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new MusterError('MUSTER_CLOSED', 'the Kubernetes connection is closed'));
    this.#agent.destroy();
  }
}

/** Resolves the connection and opens a client on it. */
export async function connect(options: ConnectionOptions): Promise<KubeClient> {
  const connection = await resolveConnection(options);
  return new KubeClient(connection, { requestTimeout: options.requestTimeout });
}

/** The wire form of a Lease's MicroTime: RFC 3339 with exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
