import { watch as watchFs, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { BackendError, type Endpoint } from '@muster/core';
import { EventChannel, type DiscoveryBackend, type DiscoveryCallOptions, type DiscoveryView } from '@muster/core/adapter';
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
  /** With `file`: this process's member id; `self` is its entry as the file was last read. */
  readonly selfId?: string;
  /** How long to let a burst of file writes settle before re-reading (ms). */
  readonly settle?: number;
}

/**
 * Fixed membership, as a Discovery backend (core's createDiscovery builds the port). With `file`,
 * membership can change: each watch re-reads the file when it changes or the process gets SIGHUP.
 * A broken file is an error view (core reports degraded, keeping the last good members) and the
 * next good write recovers. There is no registration: membership is the configuration itself.
 */
export class StaticDiscoveryBackend implements DiscoveryBackend {
  readonly name = 'static';
  #self: Endpoint | undefined;
  readonly #options: StaticDiscoveryOptions;

  constructor(options: StaticDiscoveryOptions) {
    this.#options = options;
    this.#self = options.self;
  }

  get self(): Endpoint | undefined {
    return this.#self;
  }

  /** With a file and a self id: reads the file once, so `self` is known before the first list or watch. */
  async start(): Promise<void> {
    if (this.#options.file && this.#options.selfId !== undefined) await this.#readFile(this.#options.file);
  }

  async #readFile(file: string): Promise<Endpoint[]> {
    const endpoints = await readMembersFile(file, this.#options.baseDir);
    const selfId = this.#options.selfId;
    if (selfId !== undefined) this.#self = endpoints.find((e) => e.id === selfId) ?? this.#self;
    return endpoints;
  }

  async #read(service: string): Promise<Endpoint[]> {
    if (this.#options.service !== undefined && service !== this.#options.service) return [];
    if (this.#options.file) return this.#readFile(this.#options.file);
    return [...(this.#options.members ?? [])];
  }

  async list(service: string): Promise<Endpoint[]> {
    return this.#read(service);
  }

  async *views(service: string, { signal }: DiscoveryCallOptions): AsyncGenerator<DiscoveryView> {
    // A broken file at the start fails the watch: there is no last good membership to keep.
    yield await this.#read(service);
    const file = this.#options.file;
    if (!file) {
      await new Promise<void>((done) => (signal.aborted ? done() : signal.addEventListener('abort', () => done(), { once: true })));
      return;
    }
    const path = resolve(this.#options.baseDir, file);
    const settle = this.#options.settle ?? 50;
    let timer: NodeJS.Timeout | undefined;
    let watcher: FSWatcher | undefined;
    const changes = new EventChannel<DiscoveryView>(() => {
      watcher?.close();
      process.off('SIGHUP', reread);
      clearTimeout(timer);
    }, signal);
    const refresh = () => {
      void this.#read(service).then(
        (endpoints) => changes.push(endpoints),
        (error: unknown) => changes.push({ error }),
      );
    };
    const reread = () => {
      clearTimeout(timer);
      timer = setTimeout(refresh, settle);
    };
    try {
      // Watch the folder, not the file: editors and config managers replace files by rename.
      watcher = watchFs(dirname(path), (_event, name) => {
        if (name === null || name === basename(path)) reread();
      });
    } catch (error) {
      changes.end();
      throw new BackendError('static', `cannot watch ${path}: ${(error as Error).message}`, { cause: error });
    }
    process.on('SIGHUP', reread);
    yield* changes;
  }
}
