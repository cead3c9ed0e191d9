/** What the drain needs of a client connection. */
export interface DrainableClient {
  /** Requests this client sent that have no answer yet. */
  readonly inFlight: number;
  /** Event types it REGISTERed for: a driver's control connection has some. */
  readonly registered: ReadonlySet<string>;
  /** Half-closes (FIN, never RST) once every request it sent has its answer. */
  endWhenAnswered(): void;
  /** Closes now, whatever is in flight. */
  close(): void;
}

export interface DrainOptions {
  /** ms drivers get to leave on their own once peers announce this instance leaving. */
  readonly grace: number;
  /** ms after which whatever is still open is closed, in flight or not. */
  readonly timeout: number;
  readonly signal?: AbortSignal;
}

export interface DrainReport {
  /** Connections the drivers closed themselves. */
  readonly left: number;
  /** Connections this instance half-closed after their last answer. */
  readonly ended: number;
  /** Connections cut at the timeout. */
  readonly cut: number;
}

/**
 * Empties an instance's client connections without losing a request, once the instance shows
 * itself draining (peers then announce it DOWN and remove it, see PeerLiveness).
 *
 * 1. Control connections (those that REGISTERed) are half-closed as soon as they are idle: a
 *    driver whose control connection was here reconnects it to a peer and hears the removal
 *    there. (The Node.js driver also sends requests on it; see the README on the residual risk.)
 * 2. For `grace`, every other connection keeps being served: drivers that hear the removal close
 *    their pools to this instance themselves once their requests are answered, with nothing lost.
 * 3. Then each remaining connection is half-closed once every request it sent has its answer.
 * 4. At `timeout`, whatever is left is closed.
 * New requests are served throughout: a draining proxy never answers OVERLOADED, which drivers
 * do not retry for non-idempotent statements.
 */
export async function drainClients(clients: ReadonlySet<DrainableClient>, options: DrainOptions): Promise<DrainReport> {
  const initial = new Set(clients);
  const ended = new Set<DrainableClient>();
  const end = (client: DrainableClient) => {
    ended.add(client);
    client.endWhenAnswered();
  };
  const start = Date.now();
  for (const client of clients) if (client.registered.size > 0) end(client);
  await waitUntil(() => clients.size === 0, start + options.grace, options.signal);
  for (const client of clients) if (!ended.has(client)) end(client);
  await waitUntil(() => clients.size === 0, start + Math.max(options.grace, options.timeout), options.signal);
  const cut = [...clients];
  for (const client of cut) client.close();
  const endedByUs = [...ended].filter((c) => !cut.includes(c)).length;
  return { left: [...initial].filter((c) => !ended.has(c) && !cut.includes(c)).length, ended: endedByUs, cut: cut.length };
}

async function waitUntil(done: () => boolean, deadline: number, signal: AbortSignal | undefined): Promise<void> {
  while (!done() && Date.now() < deadline && !signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))));
  }
}
