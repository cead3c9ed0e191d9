/**
 * Kubernetes API failures as our BackendError: the HTTP status, the Status `reason`, the verb and
 * the resource, with a message that says what to fix.
 */
import { BackendError } from '@muster/core';
import { resourceName, type ResourceType } from './resources.js';

/** The Role that grants exactly what this adapter does; named in every 403 message. */
const rbacHint = 'grant it with the Role in deploy/kubernetes/rbac.yaml (get/list/watch endpointslices; get/create/update leases)';

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

export interface StatusBody {
  kind?: string;
  reason?: string;
  message?: string;
  code?: number;
  details?: { kind?: string; name?: string };
}

export function parseStatus(body: unknown): StatusBody | undefined {
  if (typeof body === 'string') {
    try {
      return parseStatus(JSON.parse(body));
    } catch {
      return body ? { message: body.slice(0, 300) } : undefined;
    }
  }
  return typeof body === 'object' && body !== null ? (body as StatusBody) : undefined;
}

/** What a call was about, for its error messages. */
export interface CallTarget {
  readonly namespace: string;
  readonly name?: string | undefined;
  /** Who we are (a kubeconfig user, the pod's service account). */
  readonly identity?: string | undefined;
}

/**
 * Turns a failed call into our error, naming what was attempted. Accepts an HTTP status with the
 * response body, or @kubernetes/client-node's ApiException (`code` and `body` as a JSON string),
 * so errors read the same whichever path made the call.
 */
export function kubernetesError(
  verb: string,
  resource: ResourceType,
  target: CallTarget,
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

/** What to say when the API server could not be reached at all (directly or through the proxy). */
export function unreachable(
  verb: string,
  resource: ResourceType,
  namespace: string,
  route: { server: URL; proxy?: URL | undefined },
  cause: unknown,
): KubernetesError {
  const code = (cause as NodeJS.ErrnoException)?.code;
  const via = route.proxy ? ` through proxy ${route.proxy.origin}` : '';
  return new KubernetesError(
    verb,
    resourceName(resource),
    `${verb} ${resourceName(resource)} in namespace '${namespace}': cannot reach the API server at ${route.server.origin}${via} (${code ?? (cause as Error)?.message ?? String(cause)})`,
    { cause },
  );
}
