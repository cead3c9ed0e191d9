/**
 * Reading one watch response: newline-delimited JSON events, an ERROR event as our error (410
 * Gone: relist), a stream cut short as an error, and a stream silent for too long ended like a
 * normal close.
 */
import type { IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import { KubernetesError, kubernetesError, parseStatus, unreachable, type CallTarget } from './kubernetes-error.js';
import { resourceName, type ResourceType, type WatchEvent } from './resources.js';

export interface WatchStreamOptions {
  readonly resource: ResourceType;
  readonly target: CallTarget;
  readonly route: { server: URL; proxy?: URL | undefined };
  /** The server ends the watch after this; we give it 30 s more before ending it ourselves. */
  readonly timeoutSeconds: number;
  /** A connection silent for longer (a peer gone without a FIN) is ended like a normal close. */
  readonly idleTimeout: number;
  /** Ends the watch quietly (the caller's abort, the client's close). */
  readonly signals: readonly AbortSignal[];
}

/**
 * Opens the watch with `open` and yields its events. Ends normally when the server closes the
 * watch (its timeout) or when the connection stays silent past the idle timeout, so the caller
 * re-watches from its resourceVersion and a dead server shows up as a failed reconnect.
 */
export async function* watchStream<T>(
  open: (signal: AbortSignal) => Promise<IncomingMessage>,
  options: WatchStreamOptions,
): AsyncGenerator<WatchEvent<T>> {
  const { resource, target } = options;
  const stop = new AbortController();
  let quiet = false;
  const endQuietly = () => {
    quiet = true;
    stop.abort();
  };
  const deadline = setTimeout(endQuietly, (options.timeoutSeconds + 30) * 1000).unref();
  let idle = setTimeout(endQuietly, options.idleTimeout).unref();
  const aborted = () => quiet || options.signals.some((s) => s.aborted);
  let res: IncomingMessage;
  try {
    res = await open(AbortSignal.any([stop.signal, ...options.signals]));
  } catch (cause) {
    clearTimeout(deadline);
    clearTimeout(idle);
    if (aborted()) return;
    throw unreachable('watch', resource, target.namespace, options.route, cause);
  }
  try {
    const status = res.statusCode ?? 0;
    if (status !== 200) {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      throw kubernetesError('watch', resource, target, { status, body: Buffer.concat(chunks).toString('utf8') });
    }
    // Attached in the same tick as readline, so both see every chunk.
    res.on('data', () => {
      clearTimeout(idle);
      idle = setTimeout(endQuietly, options.idleTimeout).unref();
    });
    const lines = createInterface({ input: res, crlfDelay: Infinity });
    try {
      for await (const line of lines) {
        if (!line.trim()) continue;
        const event = JSON.parse(line) as { type: string; object: unknown };
        if (event.type === 'ERROR') {
          const st = parseStatus(event.object);
          throw kubernetesError('watch', resource, target, { status: st?.code ?? 500, body: st });
        }
        yield event as WatchEvent<T>;
      }
    } catch (cause) {
      if (aborted()) return;
      if (cause instanceof KubernetesError) throw cause;
      throw broken(resource, target, `the stream broke (${(cause as Error)?.message ?? String(cause)})`, cause);
    }
    if (aborted()) return;
    if (!res.complete) throw broken(resource, target, 'the stream ended before the server finished it');
  } finally {
    clearTimeout(deadline);
    clearTimeout(idle);
    stop.abort();
    res.destroy();
  }
}

function broken(resource: ResourceType, target: CallTarget, problem: string, cause?: unknown): KubernetesError {
  return new KubernetesError(
    'watch',
    resourceName(resource),
    `watch ${resourceName(resource)} in namespace '${target.namespace}': ${problem}`,
    cause === undefined ? {} : { cause },
  );
}
