import { watch as watchFs, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { BackendError, ClosedError, MusterError, type Discovery, type DiscoveryEvent, type Endpoint, type WaitOptions } from '@muster/core';
import { anySignal, EndpointSet, EventChannel, throwIfAborted } from '@muster/core/adapter';
import { readMembersFile } from './members.js';

export interface StaticDiscoveryOptions {
  /** The service these members belong to; other names list as empty. Any name when omitted. */
  readonly service?: string;
  /** Members given inline (sorted by id). */
  readonly members?: readonly Endpoint[];
  /** Or a file with `members:`; re-read on change and on SIGHUP while a watch runs. */
  readonly file?: string;
  readonly baseDir: string;
  readonly self?: Endpoint;
  /** How long to let a burst of file writes settle before re-reading (ms). */
  readonly settle?: number;
}

/**
 * Fixed membership. With `file`, membership can change: each watch re-reads the file when it
 * changes or the process gets SIGHUP, and emits the difference. Nothing runs unless a watch does.
 */
export class StaticDiscovery implements Discovery {
  readonly self: Endpoint | undefined;
  readonly #options: StaticDiscoveryOptions;
  readonly #closing = new AbortController();

  constructor(options: StaticDiscoveryOptions) {
    this.#options = options;
    this.self = options.self;
  }

  async #read(service: string): Promise<Endpoint[]> {
    if (this.#options.service !== undefined && service !== this.#options.service) return [];
    if (this.#options.file) return readMembersFile(this.#options.file, this.#options.baseDir);
    return [...(this.#options.members ?? [])];
  }

  #signal(options?: WaitOptions): AbortSignal {
    if (this.#closing.signal.aborted) throw new ClosedError('static discovery');
    return anySignal(options?.signal, this.#closing.signal);
  }

  async list(service: string, options?: WaitOptions): Promise<Endpoint[]> {
    throwIfAborted(this.#signal(options), 'list()');
    return this.#read(service);
  }

  watch(service: string, options?: WaitOptions): AsyncIterable<DiscoveryEvent> {
    const stop = new AbortController();
    const signal = anySignal(this.#signal(options), stop.signal);
    const channel = new EventChannel<DiscoveryEvent>(() => stop.abort(), signal);
    void this.#run(service, signal, channel);
    return channel;
  }

  async #run(service: string, signal: AbortSignal, channel: EventChannel<DiscoveryEvent>): Promise<void> {
    const state = new EndpointSet();
    let degraded = false;
    try {
      state.replace(await this.#read(service));
      channel.push({ type: 'snapshot', endpoints: state.endpoints });
    } catch (error) {
      channel.fail(error);
      return;
    }
    const file = this.#options.file;
    if (!file || signal.aborted) return;

    const path = resolve(this.#options.baseDir, file);
    let timer: NodeJS.Timeout | undefined;
    const reread = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void refresh(), this.#options.settle ?? 50);
    };
    const refresh = async () => {
      if (signal.aborted) return;
      try {
        const next = await this.#read(service);
        if (degraded) {
          degraded = false;
          channel.push({ type: 'recovered', endpoints: state.endpoints });
        }
        for (const event of state.replace(next)) channel.push(event);
      } catch (error) {
        // A half-written or broken file keeps the last good membership: degraded, never empty.
        degraded = true;
        const err = MusterError.is(error) ? error : new BackendError('static', String(error), { cause: error });
        channel.push({ type: 'degraded', error: err, endpoints: state.endpoints });
      }
    };
    // Watch the folder, not the file: editors and config managers replace files by rename.
    let watcher: FSWatcher | undefined;
    try {
      watcher = watchFs(dirname(path), (_event, name) => {
        if (name === null || name === basename(path)) reread();
      });
    } catch (error) {
      channel.fail(new BackendError('static', `cannot watch ${path}: ${(error as Error).message}`, { cause: error }));
      return;
    }
    process.on('SIGHUP', reread);
    await new Promise<void>((done) => signal.addEventListener('abort', () => done(), { once: true }));
    watcher.close();
    process.off('SIGHUP', reread);
    clearTimeout(timer);
  }

  async register(): Promise<void> {
    // Static membership is the configuration itself: there is nothing to register with.
  }

  async deregister(): Promise<void> {}

  async close(): Promise<void> {
    this.#closing.abort(new ClosedError('static discovery'));
  }
}
