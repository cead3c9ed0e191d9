import type { Frame } from '../protocol/frame.js';

/** Called once with the response frame, or with the error that means none will come. */
export type ResponseHandler = (error: Error | undefined, response: Frame | undefined) => void;

/** Stands in for the handler of a request already answered with a timeout: its id stays reserved. */
export const TIMED_OUT: ResponseHandler = () => undefined;

/**
 * The requests in flight on one backend connection, in arrays indexed by stream id. Ids are handed
 * out densely from the lowest (stream-ids.ts), so the arrays stay as long as the most requests ever
 * in flight at once; an answer is found by one index instead of a hash lookup, and a request adds no
 * object of its own.
 */
export class PendingRequests {
  /** Per id: the request's handler, {@link TIMED_OUT}, or undefined when the id is not in flight. */
  readonly #handlers: (ResponseHandler | undefined)[] = [];
  /** Per id: when to answer with a timeout (ms since the epoch), 0 for never. */
  readonly #deadlines: number[] = [];
  /** Per id: the timeout asked for (ms), for the error's message. */
  readonly #timeouts: number[] = [];

  add(stream: number, handler: ResponseHandler, timeout: number | undefined): void {
    // Filled in order: a hole would turn the arrays into slow dictionaries.
    while (this.#handlers.length < stream) this.#grow();
    this.#handlers[stream] = handler;
    this.#deadlines[stream] = timeout ? Date.now() + timeout : 0;
    this.#timeouts[stream] = timeout ?? 0;
  }

  #grow(): void {
    this.#handlers.push(undefined);
    this.#deadlines.push(0);
    this.#timeouts.push(0);
  }

  /** Removes and returns what waits on `stream` (a handler or {@link TIMED_OUT}); undefined when nothing does. */
  take(stream: number): ResponseHandler | undefined {
    if (stream >= this.#handlers.length) return undefined;
    const handler = this.#handlers[stream];
    this.#handlers[stream] = undefined;
    return handler;
  }

  /** Moves every deadline later by `ms` (time the connection was not read: not the node's delay). */
  postpone(ms: number): void {
    const deadlines = this.#deadlines;
    for (let i = 0; i < deadlines.length; i++) if (this.#handlers[i] !== undefined && deadlines[i] !== 0) deadlines[i] = deadlines[i]! + ms;
  }

  /**
   * Answers every request whose deadline passed with `error(timeout)`. The id stays reserved until
   * the late answer arrives (or the connection closes), so a late answer can never be mistaken for
   * the reply to a newer request. Whether any timed out.
   */
  expire(now: number, error: (timeout: number) => Error): boolean {
    const handlers = this.#handlers;
    let expired = false;
    for (let i = 0; i < handlers.length; i++) {
      const handler = handlers[i];
      const deadline = this.#deadlines[i]!;
      if (handler === undefined || handler === TIMED_OUT || deadline === 0 || deadline > now) continue;
      handlers[i] = TIMED_OUT;
      expired = true;
      handler(error(this.#timeouts[i]!), undefined);
    }
    return expired;
  }

  /** Fails every request still waiting (the connection closed) and forgets them all. */
  failAll(failure: Error): void {
    const handlers = this.#handlers;
    for (let i = 0; i < handlers.length; i++) {
      const handler = handlers[i];
      handlers[i] = undefined;
      if (handler !== undefined && handler !== TIMED_OUT) handler(failure, undefined);
    }
  }
}
