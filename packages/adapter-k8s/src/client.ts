/**
 * The connection to the Kubernetes API server and the few REST calls the adapter makes (get, list,
 * create, replace, delete, watch) as JSON over node:https (or node:http). Where the server is and
 * who we are is resolved in resolve-connection.ts; bytes travel through transport.ts.
 *
 * Why not @kubernetes/client-node's generated API classes: every one of them imports the
 * ObjectSerializer and with it all ~700 models, and KubeConfig imports the whole generated client;
 * measured here that is 35 % (one API class) to 70 % (KubeConfig) of the full import, far over the
 * cold-start budget. The calls we make are plain JSON, so they are written here. The library is
 * loaded only when the application passes its own KubeConfig (it loaded it), or for kubeconfig
 * users that authenticate through an `exec` plugin or an `auth-provider` (plugin-credentials.ts).
 */
import type { IncomingMessage } from 'node:http';
import { InvalidArgumentError, MusterError } from '@muster/core';
import { abortErrorFrom } from '@muster/core/adapter';
import type { ConnectionOptions, Credentials, ResolvedConnection } from './connection.js';
import { KubernetesError, kubernetesError, unreachable } from './kubernetes-error.js';
import { resolveConnection } from './resolve-connection.js';
import { resourceName, type KubeObject, type ListResult, type ResourceType, type WatchEvent } from './resources.js';
import { Transport } from './transport.js';
import { watchStream } from './watch-stream.js';

export type { ConnectionOptions, ResolvedConnection } from './connection.js';
export { serviceAccountDir } from './in-cluster.js';
export { isConflict, isGone, KubernetesError, kubernetesError } from './kubernetes-error.js';
export { resolveConnection } from './resolve-connection.js';
export { endpointSlices, leases, microTime, type KubeObject, type ListResult, type ResourceType, type WatchEvent } from './resources.js';

export interface CallOptions {
  readonly signal?: AbortSignal | undefined;
}

/** One REST call: what it is (for messages) and what goes on the wire. */
interface Call {
  readonly verb: string;
  readonly resource: ResourceType;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly name?: string | undefined;
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: unknown;
}

const isAbort = (error: unknown) => (error as { name?: string })?.name === 'AbortError' || MusterError.is(error, 'MUSTER_ABORTED');

/** A connection to one namespace of one API server; close() ends calls in flight and drops sockets. */
export class KubeClient {
  readonly namespace: string;
  readonly server: URL;
  readonly source: string;
  readonly #credentials: Credentials;
  readonly #transport: Transport;
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
    this.#transport = new Transport(connection.server, connection.credentials.tls, connection.proxy);
  }

  #path(call: Call): string {
    const { resource, name, query } = call;
    const base = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
    let path = `${base}/namespaces/${encodeURIComponent(this.namespace)}/${resource.plural}${name && call.method !== 'POST' ? `/${encodeURIComponent(name)}` : ''}`;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    if (qs) path += `?${qs}`;
    return path;
  }

  #target(name?: string) {
    return { namespace: this.namespace, name, identity: this.#credentials.identity };
  }

  /**
   * Sends the call with fresh credentials. A 401 makes the credentials look again (a rotated token
   * file); when they changed, the call goes once more: a 401 means the server did nothing.
   */
  async #exchange(call: Call, signal: AbortSignal): Promise<IncomingMessage> {
    const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
    const send = async () => {
      const headers: Record<string, string> = { Accept: 'application/json', ...(await this.#credentials.headers()) };
      if (payload) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(payload.length);
      }
      return this.#transport.send({ method: call.method, path: this.#path(call), headers, body: payload, signal });
    };
    const res = await send();
    if (res.statusCode !== 401 || !this.#credentials.refresh) return res;
    // The 401 body says nothing our message does not; drained so the socket can be reused.
    await readBody(res);
    return (await this.#credentials.refresh()) ? send() : res;
  }

  /** One non-watch call; parses the JSON answer, maps failures to KubernetesError. */
  async #call<T>(call: Call, options: CallOptions): Promise<T> {
    const what = `${call.verb} ${resourceName(call.resource)}`;
    if (this.#closing.signal.aborted) throw abortErrorFrom(this.#closing.signal, what);
    const signal = AbortSignal.any([
      AbortSignal.timeout(this.#requestTimeout),
      this.#closing.signal,
      ...(options.signal ? [options.signal] : []),
    ]);
    let res: IncomingMessage;
    let text: string;
    try {
      res = await this.#exchange(call, signal);
      text = await readBody(res);
    } catch (cause) {
      if (options.signal?.aborted || this.#closing.signal.aborted)
        throw abortErrorFrom(options.signal?.aborted ? options.signal : this.#closing.signal, what);
      if (isAbort(cause)) {
        throw new KubernetesError(
          call.verb,
          resourceName(call.resource),
          `${what} in namespace '${this.namespace}': no answer from ${this.server.origin} within ${this.#requestTimeout} ms`,
          { cause },
        );
      }
      throw unreachable(call.verb, call.resource, this.namespace, this.#transport, cause);
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw kubernetesError(call.verb, call.resource, this.#target(call.name), { status, body: text });
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** The object, or undefined when it does not exist. */
  async get<T extends KubeObject>(resource: ResourceType, name: string, options: CallOptions = {}): Promise<T | undefined> {
    try {
      return await this.#call<T>({ verb: 'get', resource, method: 'GET', name }, options);
    } catch (error) {
      if (error instanceof KubernetesError && error.status === 404) return undefined;
      throw error;
    }
  }

  async list<T extends KubeObject>(resource: ResourceType, options: CallOptions & { labelSelector?: string } = {}): Promise<ListResult<T>> {
    const list = await this.#call<{ items?: T[]; metadata?: { resourceVersion?: string } }>(
      { verb: 'list', resource, method: 'GET', query: { labelSelector: options.labelSelector } },
      options,
    );
    return { items: list.items ?? [], resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  create<T extends KubeObject>(resource: ResourceType, body: T, options: CallOptions = {}): Promise<T> {
    return this.#call<T>({ verb: 'create', resource, method: 'POST', name: body.metadata?.name, body }, options);
  }

  /** PUT with the body's resourceVersion: 409 Conflict when somebody else wrote first. */
  replace<T extends KubeObject>(resource: ResourceType, body: T, options: CallOptions = {}): Promise<T> {
    const name = body.metadata?.name;
    if (!name) throw new InvalidArgumentError('replace(): the object has no metadata.name');
    return this.#call<T>({ verb: 'update', resource, method: 'PUT', name, body }, options);
  }

  /** Deletes; a missing object is not an error. With `resourceVersion`, only that version is deleted. */
  async delete(resource: ResourceType, name: string, options: CallOptions & { resourceVersion?: string } = {}): Promise<void> {
    const body = options.resourceVersion
      ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { resourceVersion: options.resourceVersion } }
      : undefined;
    try {
      await this.#call({ verb: 'delete', resource, method: 'DELETE', name, body }, options);
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
  watch<T extends KubeObject>(
    resource: ResourceType,
    options: CallOptions & { labelSelector?: string; resourceVersion: string; timeoutSeconds: number; idleTimeout?: number },
  ): AsyncGenerator<WatchEvent<T>> {
    const call: Call = {
      verb: 'watch',
      resource,
      method: 'GET',
      query: {
        watch: 1,
        labelSelector: options.labelSelector,
        resourceVersion: options.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: options.timeoutSeconds,
      },
    };
    return watchStream<T>((signal) => this.#exchange(call, signal), {
      resource,
      target: this.#target(),
      route: this.#transport,
      timeoutSeconds: options.timeoutSeconds,
      idleTimeout: options.idleTimeout ?? this.#watchIdleTimeout,
      signals: [this.#closing.signal, ...(options.signal ? [options.signal] : [])],
    });
  }

  /** Ends every call in flight and drops the kept-alive sockets. */
  close(): void {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort(new MusterError('MUSTER_CLOSED', 'the Kubernetes connection is closed'));
    this.#transport.close();
  }
}

async function readBody(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Resolves the connection and opens a client on it. */
export async function connect(options: ConnectionOptions): Promise<KubeClient> {
  const connection = await resolveConnection(options);
  return new KubeClient(connection, { requestTimeout: options.requestTimeout });
}
