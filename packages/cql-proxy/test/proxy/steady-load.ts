import type cassandra from 'cassandra-driver';

/** One failed request: when it was sent, how long it took, what the driver said. */
export interface LoadFailure {
  readonly at: number;
  readonly ms: number;
  readonly message: string;
}

/** What the load saw between two marks. */
export interface LoadWindow {
  readonly ok: number;
  readonly failed: readonly LoadFailure[];
  /** Requests (ok or failed) that took at least `slowMs`: they waited out a timeout. */
  readonly slow: number;
  readonly maxMs: number;
}

/**
 * A steady driver load: `rate` requests a second, sent whether or not earlier ones have been
 * answered (a fault must not slow the load down and hide itself), at most `maxInFlight` at once.
 */
export class SteadyLoad {
  readonly #client: cassandra.Client;
  readonly #send: (client: cassandra.Client, i: number) => Promise<unknown>;
  readonly #rate: number;
  readonly #maxInFlight: number;
  readonly #slowMs: number;
  #timer: NodeJS.Timeout | undefined;
  #sent = 0;
  #inFlight = new Set<Promise<unknown>>();
  #ok = 0;
  #failed: LoadFailure[] = [];
  #slow = 0;
  #maxMs = 0;
  /** Requests not sent because `maxInFlight` were outstanding. */
  skipped = 0;

  constructor(
    client: cassandra.Client,
    send: (client: cassandra.Client, i: number) => Promise<unknown>,
    options: { rate: number; maxInFlight: number; slowMs: number },
  ) {
    this.#client = client;
    this.#send = send;
    this.#rate = options.rate;
    this.#maxInFlight = options.maxInFlight;
    this.#slowMs = options.slowMs;
  }

  start(): void {
    const tick = 20;
    let owed = 0;
    this.#timer = setInterval(() => {
      owed += (this.#rate * tick) / 1000;
      for (; owed >= 1; owed--) this.#one();
    }, tick);
  }

  #one(): void {
    if (this.#inFlight.size >= this.#maxInFlight) {
      this.skipped++;
      return;
    }
    const started = Date.now();
    const request = this.#send(this.#client, this.#sent++).then(
      () => this.#done(started, undefined),
      (error: unknown) => this.#done(started, (error as Error).message),
    );
    this.#inFlight.add(request);
    void request.finally(() => this.#inFlight.delete(request));
  }

  #done(started: number, failure: string | undefined): void {
    const ms = Date.now() - started;
    this.#maxMs = Math.max(this.#maxMs, ms);
    if (ms >= this.#slowMs) this.#slow++;
    if (failure === undefined) this.#ok++;
    else this.#failed.push({ at: started, ms, message: failure });
  }

  /** Successful requests since the last mark. */
  get ok(): number {
    return this.#ok;
  }

  /** What happened since the last mark; starts a new window. */
  mark(): LoadWindow {
    const window = { ok: this.#ok, failed: this.#failed, slow: this.#slow, maxMs: this.#maxMs };
    this.#ok = 0;
    this.#failed = [];
    this.#slow = 0;
    this.#maxMs = 0;
    return window;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.allSettled([...this.#inFlight]);
  }
}
