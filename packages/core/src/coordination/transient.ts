import { MusterError } from '../errors.js';

/** Node's codes for a connection that failed or broke: the backend may answer the next attempt. */
const networkCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/**
 * Errors worth retrying: the backend is unreachable, slow or overloaded, or a write raced another
 * (409). Everything else, above all a TypeError or other programming error from an adapter, is
 * not: retrying cannot fix it and would hide it behind a timeout.
 */
export function isTransient(error: unknown): boolean {
  if (MusterError.is(error)) {
    if (error.code === 'MUSTER_TIMEOUT') return true;
    if (error.code !== 'MUSTER_BACKEND') return false;
    const status = (error as { status?: number }).status;
    return status === undefined || status === 409 || status === 429 || status >= 500;
  }
  if (typeof error !== 'object' || error === null) return false;
  // AbortSignal.timeout() rejects with a DOMException named TimeoutError.
  if ((error as { name?: unknown }).name === 'TimeoutError') return true;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && networkCodes.has(code);
}
