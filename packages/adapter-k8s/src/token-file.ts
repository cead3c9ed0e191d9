import { readFileSync, statSync } from 'node:fs';

/**
 * A bearer token kept in a file that something else rotates: the kubelet's projected
 * service-account token (rewritten well before it expires), or a kubeconfig `tokenFile` an
 * operator replaces. Like client-go, it is re-read at most once a minute when the file changed;
 * and at once after the server rejected it (reload()), so a revoked old token costs one 401, not
 * a minute of failed calls.
 */
export class TokenFile {
  readonly path: string;
  readonly #maxAge: number;
  readonly #now: () => number;
  #token = '';
  #mtime = -1;
  #checkedAt = 0;

  constructor(path: string, options: { maxAge?: number; now?: () => number } = {}) {
    this.path = path;
    this.#maxAge = options.maxAge ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** The current token; throws (ENOENT…) when the file cannot be read the first time. */
  read(): string {
    const now = this.#now();
    if (this.#token && now - this.#checkedAt < this.#maxAge) return this.#token;
    this.#checkedAt = now;
    try {
      const { mtimeMs } = statSync(this.path);
      if (mtimeMs !== this.#mtime || !this.#token) {
        this.#token = readFileSync(this.path, 'utf8').trim();
        this.#mtime = mtimeMs;
      }
    } catch (error) {
      // Mid-rotation (the kubelet swaps a symlink): keep the token we have until the next look.
      if (!this.#token) throw error;
    }
    return this.#token;
  }

  /** Reads the file now, whatever its mtime says; true when the token changed. */
  reload(): boolean {
    const before = this.#token;
    this.#checkedAt = 0;
    this.#mtime = -1;
    return this.read() !== before;
  }
}
