/**
 * A small client for the Consul HTTP API, written on node:http / node:https rather than on the
 * `consul` npm package (node-consul 2.0.1) or on fetch(). Measured on this project's Node 20
 * (cold process, minimum of six runs): importing `consul` costs ~125 ms, the first fetch() ~110 ms
 * (it loads undici lazily), node:http + node:https ~20 ms. Cold start aside, every call this adapter
 * makes needs something node-consul makes awkward: blocking queries need X-Consul-Index (only via
 * an `includeResponse` event-emitter context, untyped), cancellation is an emitted event rather than
 * an AbortSignal, a failed `acquire` resolves to undefined, its errors carry a whole IncomingMessage,
 * and it has no lock or fencing helper left. fetch() has the signal and headers but cannot take a
 * CA or client certificate without importing undici for a dispatcher. So node:http(s) serves every
 * call here; node-consul is used in this package's tests only, as an independent client that sets
 * up services and checks the way an operator's tooling would.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isAbsolute, resolve } from 'node:path';
import { BackendError, InvalidArgumentError } from '@muster/core';
import { abortErrorFrom, anySignal } from '@muster/core/adapter';

export interface ConsulTls {
  /** PEM text of the CA bundle that signed the agent's certificate. */
  readonly ca?: string;
  /** PEM text of a client certificate and its key, for agents with verify_incoming. */
  readonly cert?: string;
  readonly key?: string;
  /** Name to verify the agent's certificate against, when it differs from the address's host. */
  readonly serverName?: string;
}

export interface ConsulConnectionOptions {
  /** `host:port`, `http://host:port` or `https://host:port`. */
  readonly address: string;
  readonly token?: string;
  readonly datacenter?: string;
  /** Enterprise only; an OSS agent refuses any request carrying them. */
  readonly namespace?: string;
  readonly partition?: string;
  readonly tls?: ConsulTls;
  /** Ceiling for a non-blocking call (ms). */
  readonly requestTimeout?: number;
}

export interface ConsulRequest {
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
  /** Statuses returned to the caller instead of thrown (e.g. 404 for a missing key, 409 for a failed txn). */
  readonly accept?: readonly number[];
  /** A blocking query: wait for X-Consul-Index to pass `index`, for at most `wait` ms. */
  readonly index?: bigint;
  readonly wait?: number;
  /** What the call is for, in the words of an error message (`acquire lock key muster/locks/x`). */
  readonly purpose: string;
  /** The ACL rule the call needs, shown when Consul's own 403 message does not name it. */
  readonly rule?: string;
  /** Leave out dc: agent endpoints act on the local agent, whatever datacenter reads go to. */
  readonly local?: boolean;
}

export interface ConsulResponse<T> {
  readonly status: number;
  readonly body: T;
  /** X-Consul-Index, where the endpoint sends one. */
  readonly index: bigint | undefined;
  /** Consul removed entries the token may not read from this answer. */
  readonly filteredByAcls: boolean;
}

const backend = 'consul';

/**
 * The agent's HTTP API base from `host:port` (http, or https with TLS settings) or an http(s) URL;
 * `where` names the setting in the error (a config place, CONSUL_HTTP_ADDR).
 */
export function agentUrl(address: string, tls: boolean, where = 'address'): URL {
  const raw = /^https?:\/\//.test(address) ? address : `${tls ? 'https' : 'http'}://${address}`;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    // Not a URL; nor is a port above 65535.
  }
  if (url === undefined || url.port === '0') {
    throw new InvalidArgumentError(`${where}: ${JSON.stringify(address)} is not host:port or an http(s) URL (port 1-65535)`);
  }
  return url;
}

/** Consul's own env variables, so a process configured for the consul CLI needs no extra options. */
export function connectionFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Partial<ConsulConnectionOptions> & { caFile?: string; certFile?: string; keyFile?: string } {
  const out: Record<string, string> = {};
  const pick = (key: string, name: string) => {
    const v = env[name];
    if (v !== undefined && v !== '') out[key] = v;
  };
  pick('address', 'CONSUL_HTTP_ADDR');
  pick('token', 'CONSUL_HTTP_TOKEN');
  pick('namespace', 'CONSUL_NAMESPACE');
  pick('partition', 'CONSUL_PARTITION');
  pick('caFile', 'CONSUL_CACERT');
  pick('certFile', 'CONSUL_CLIENT_CERT');
  pick('keyFile', 'CONSUL_CLIENT_KEY');
  if (env.CONSUL_HTTP_SSL === 'true' && out.address && !/^https?:\/\//.test(out.address)) out.address = `https://${out.address}`;
  return out;
}

/** Reads a PEM file named in options, relative to the config's folder, with an error naming the option. */
export function readPem(file: string, baseDir: string, option: string): string {
  const path = isAbsolute(file) ? file : resolve(baseDir, file);
  try {
    return readFileSync(path, 'utf8');
  } catch (cause) {
    throw new InvalidArgumentError(`${option}: cannot read ${path} (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message})`);
  }
}

/** Consul's 1.14 wording: `token with AccessorID 'x' lacks permission 'key:write' on "muster/a"`. */
const deniedPattern = /lacks permission '(\w+):(\w+)' on "([^"]*)"/;

/** The HCL rule that grants what a 403 says is missing. */
export function missingRule(message: string): string | undefined {
  const match = deniedPattern.exec(message);
  if (!match) return undefined;
  const [, resource, access, name] = match;
  return `${resource} "${name}" { policy = "${access}" }`;
}

export class ConsulClient {
  readonly address: string;
  readonly datacenter: string | undefined;
  readonly #base: URL;
  readonly #token: string | undefined;
  readonly #scope: Record<string, string>;
  readonly #agent: HttpAgent;
  readonly #request: typeof httpRequest;
  readonly #timeout: number;

  constructor(options: ConsulConnectionOptions) {
    const base = agentUrl(options.address, options.tls !== undefined);
    this.#base = base;
    this.address = base.host;
    this.datacenter = options.datacenter;
    this.#token = options.token || undefined;
    this.#scope = {
      ...(options.datacenter ? { dc: options.datacenter } : {}),
      ...(options.namespace ? { ns: options.namespace } : {}),
      ...(options.partition ? { partition: options.partition } : {}),
    };
    this.#timeout = options.requestTimeout ?? 10_000;
    // Keep-alive: a lock renewal or a check pass every few seconds should not pay a TCP handshake.
    // Node unrefs idle keep-alive sockets, so a pooled socket never holds the process open.
    if (base.protocol === 'https:') {
      this.#agent = new HttpsAgent({
        keepAlive: true,
        ...(options.tls?.ca ? { ca: options.tls.ca } : {}),
        ...(options.tls?.cert ? { cert: options.tls.cert } : {}),
        ...(options.tls?.key ? { key: options.tls.key } : {}),
        ...(options.tls?.serverName ? { servername: options.tls.serverName } : {}),
      });
      this.#request = httpsRequest;
    } else {
      this.#agent = new HttpAgent({ keepAlive: true });
      this.#request = httpRequest;
    }
  }

  async get<T>(path: string, options: ConsulRequest): Promise<ConsulResponse<T>> {
    return this.call<T>('GET', path, options);
  }

  async put<T>(path: string, options: ConsulRequest): Promise<ConsulResponse<T>> {
    return this.call<T>('PUT', path, options);
  }

  async delete<T>(path: string, options: ConsulRequest): Promise<ConsulResponse<T>> {
    return this.call<T>('DELETE', path, options);
  }

  async call<T>(method: string, path: string, options: ConsulRequest): Promise<ConsulResponse<T>> {
    const url = new URL(path, this.#base);
    const { dc, ...tenancy } = this.#scope;
    const query: Record<string, string | number | boolean | undefined> = { ...tenancy, ...(options.local ? {} : { dc }), ...options.query };
    const blocking = options.index !== undefined && options.index > 0n;
    if (blocking) {
      query.index = options.index!.toString();
      // Consul caps a wait at 10 minutes (max_query_time); asking for more only confuses our timeout.
      if (options.wait !== undefined) query.wait = `${Math.min(600_000, Math.max(1, Math.round(options.wait)))}ms`;
    }
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === false) continue;
      url.searchParams.set(k, v === true ? '' : String(v));
    }
    // Consul adds up to wait/16 of jitter to a blocking query; allow for it and a little network.
    const timeout = Math.ceil(blocking ? (options.wait ?? 300_000) * (17 / 16) + 5000 : this.#timeout);
    const timer = AbortSignal.timeout(timeout);
    const signal = anySignal(options.signal, timer);
    const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);

    let res: { status: number; text: string; headers: IncomingMessage['headers'] };
    try {
      res = await this.#send(method, url, body, signal);
    } catch (cause) {
      if (options.signal?.aborted) throw abortErrorFrom(options.signal, options.purpose);
      if (timer.aborted) {
        throw new BackendError(
          backend,
          `${options.purpose}: no answer from the agent at ${this.address} within ${Math.round(timeout)} ms`,
          { cause },
        );
      }
      const code = (cause as NodeJS.ErrnoException).code ?? '';
      throw new BackendError(backend, `${options.purpose}: ${unreachable(this.address, code, (cause as Error).message)}`, { cause });
    }

    const indexHeader = res.headers['x-consul-index'];
    const index = typeof indexHeader === 'string' && /^\d+$/.test(indexHeader) ? BigInt(indexHeader) : undefined;
    const filteredByAcls = res.headers['x-consul-results-filtered-by-acls'] === 'true';
    if (res.status >= 200 && res.status < 300) {
      return { status: res.status, body: parseBody(res.text) as T, index, filteredByAcls };
    }
    if (options.accept?.includes(res.status)) {
      return { status: res.status, body: parseBody(res.text) as T, index, filteredByAcls };
    }
    const text = res.text.trim();
    if (/No path to datacenter/i.test(text)) throw await this.#noPathToDatacenter(res.status, text, options);
    throw this.#failure(res.status, text, options);
  }

  /**
   * "No path to datacenter" means either a name the cluster has never heard of (a config error,
   * reported as 400 so nobody retries it) or a known datacenter whose servers cannot be reached
   * now (a WAN failure, left as the transient 500 it is). The datacenter list tells them apart.
   */
  async #noPathToDatacenter(status: number, text: string, options: ConsulRequest): Promise<BackendError> {
    let known: string[] | undefined;
    try {
      const res = await this.call<string[]>('GET', '/v1/catalog/datacenters', {
        local: true,
        purpose: 'list datacenters',
        signal: AbortSignal.timeout(2000),
      });
      known = Array.isArray(res.body) ? res.body : undefined;
    } catch {
      known = undefined;
    }
    const dc = this.datacenter ?? '(default)';
    if (known && !known.includes(dc)) {
      return new BackendError(
        backend,
        `${options.purpose}: datacenter '${dc}' is unknown to the agent at ${this.address} (it knows ${known.join(', ') || 'none'}); fix options.datacenter`,
        { status: 400 },
      );
    }
    return new BackendError(
      backend,
      `${options.purpose}: the servers of datacenter '${dc}' cannot be reached from the agent at ${this.address} now (${text})`,
      { status },
    );
  }

  /**
   * The error for a failed transaction: Consul answers a transaction whose operation the token
   * may not perform with 409 and the denial in Errors[].What, not with 403; report it as the 403 it is.
   */
  transactionError(what: string, options: Pick<ConsulRequest, 'purpose' | 'rule'>): BackendError {
    if (/Permission denied|ACL not found/i.test(what)) return this.#failure(403, what, { ...options });
    return new BackendError(backend, `${options.purpose}: transaction failed: ${what}`, { status: 409 });
  }

  #failure(status: number, text: string, options: Pick<ConsulRequest, 'purpose' | 'rule'>): BackendError {
    const what = options.purpose;
    if (status === 403) {
      if (/ACL not found/i.test(text)) {
        return new BackendError(
          backend,
          `${what}: the agent does not know the ACL token (403 ACL not found); check options.token or CONSUL_HTTP_TOKEN`,
          { status },
        );
      }
      const rule = missingRule(text) ?? options.rule;
      const who = this.#token ? 'the token' : 'the anonymous token (no token was given: set options.token or CONSUL_HTTP_TOKEN)';
      return new BackendError(
        backend,
        `${what}: permission denied for ${who} (${text}); ${rule ? `its policy needs: ${rule}` : 'its policy lacks a rule'}; deploy/consul/policy.hcl is the minimal policy`,
        { status },
      );
    }
    if (status === 400 && /Namespaces|Admin Partitions|partition/i.test(text)) {
      return new BackendError(
        backend,
        `${what}: the agent refused namespace/partition (${text}); these are Consul Enterprise features, drop them for an OSS agent`,
        { status },
      );
    }
    return new BackendError(backend, `${what}: HTTP ${status}${text ? `: ${text.slice(0, 300)}` : ''}`, { status });
  }

  #send(
    method: string,
    url: URL,
    body: string | undefined,
    signal: AbortSignal,
  ): Promise<{ status: number; text: string; headers: IncomingMessage['headers'] }> {
    return new Promise((resolvePromise, reject) => {
      const headers: Record<string, string> = {};
      if (this.#token) headers['X-Consul-Token'] = this.#token;
      if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(Buffer.byteLength(body));
      }
      const req = this.#request(url, { method, headers, agent: this.#agent, signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolvePromise({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), headers: res.headers }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Drops pooled connections; in-flight calls are ended by their own signals. */
  close(): void {
    this.#agent.destroy();
  }
}

/** Why a request never got an answer, in terms of what to change. */
function unreachable(address: string, code: string, message: string): string {
  if (/CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA.*ALERT|ALERT_UNKNOWN_CA/i.test(code + message)) {
    return `the agent at ${address} refused the TLS handshake (${code || message}): it wants a client certificate it trusts; set tls.certFile and tls.keyFile (or CONSUL_CLIENT_CERT / CONSUL_CLIENT_KEY)`;
  }
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT_ALTNAME/i.test(code)) {
    return `TLS verification of the agent at ${address} failed (${code}: ${message}); set tls.caFile (or CONSUL_CACERT) to the CA that signed its certificate, or tls.serverName to the name in it`;
  }
  return (
    `cannot reach the Consul agent at ${address} (${code || message}); check that the agent runs and that address (or CONSUL_HTTP_ADDR) points at its HTTP API` +
    (code === 'EPROTO' || code === 'ECONNRESET' ? ', and whether it expects https' : '')
  );
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * A member id or lock name that becomes part of a KV key, checked. Keys travel in request URLs: a
 * '.' or '..' part is resolved away on the way (remove('../locks/x') deleted a lock key) and an empty
 * part ('//', a leading or trailing '/') gets HTTP 307 from Consul. Refused rather than encoded into
 * one segment: encoding would move the key of every name with a '/' that works today, and two
 * versions in one rolling upgrade would then take one lock under two different keys.
 */
export function checkKeyName(what: string, name: string): string {
  if (name.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw new InvalidArgumentError(
      `${what} ${JSON.stringify(name)}: Consul keys are reached by URL, so every '/'-separated part must be non-empty and neither '.' nor '..' (no leading, trailing or double '/')`,
    );
  }
  return name;
}

/** A service name or id that is one URL path segment, checked: '.' and '..' are resolved away in a URL. */
export function checkPathSegment(what: string, value: string): string {
  if (value === '' || value === '.' || value === '..') {
    throw new InvalidArgumentError(
      `${what} ${JSON.stringify(value)}: must be non-empty and neither '.' nor '..' (Consul's API takes it in a URL path)`,
    );
  }
  return value;
}

/** Path segment for a KV key or an id: each part encoded, slashes kept. */
export function keyPath(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}
