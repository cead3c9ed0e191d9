import { STATUS_CODES } from 'node:http';
import type { Random } from './random.js';

/** Chooses the error status of each request while a server-errors fault is in force. */
export interface CannedErrors {
  pick(method: string): number;
}

/**
 * What an overloaded or failing API server or Consul agent answers: 429 (with Retry-After), 500 and
 * 503 to anything, and 409 Conflict to writes, as contention for one object gives. Seeded, so a run
 * replays the same statuses in the same order of requests.
 */
export function serverErrors(random: Random): CannedErrors {
  return {
    pick: (method) => random.pick(method === 'PUT' || method === 'POST' ? [409, 429, 500, 503] : [429, 500, 503]),
  };
}

/**
 * A whole HTTP/1.1 response that closes its connection. The body is a Kubernetes Status (Consul's
 * client reads it as text), so each client sees the error it would get from its real server.
 */
export function cannedResponse(status: number): string {
  const reason = STATUS_CODES[status] ?? 'Error';
  const body = JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    message: `chaos: injected ${status} ${reason}`,
    reason: status === 409 ? 'Conflict' : status === 429 ? 'TooManyRequests' : status === 503 ? 'ServiceUnavailable' : 'InternalError',
    code: status,
  });
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...(status === 429 ? ['Retry-After: 1'] : []),
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
