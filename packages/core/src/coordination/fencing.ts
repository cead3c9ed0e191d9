import { MusterError } from '../errors.js';

/**
 * The check a protected resource makes: accept a write only if its fencing token is at least the
 * highest the resource has seen. A minimal reference for tests and examples; a real resource keeps
 * `highest` durably beside its data and compares in the same transaction as the write.
 */
export class FencedResource<T> {
  #highest = -1n;
  #value: T | undefined;

  get highestToken(): bigint {
    return this.#highest;
  }

  get value(): T | undefined {
    return this.#value;
  }

  write(token: bigint, value: T): void {
    if (token < this.#highest) {
      throw new StaleTokenError(token, this.#highest);
    }
    this.#highest = token;
    this.#value = value;
  }
}

export class StaleTokenError extends MusterError {
  readonly token: bigint;
  readonly highest: bigint;
  constructor(token: bigint, highest: bigint) {
    super('MUSTER_LOCK_LOST', `write with fencing token ${token} rejected: a holder with token ${highest} has written since`);
    this.token = token;
    this.highest = highest;
  }
}
