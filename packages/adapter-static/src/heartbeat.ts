import { SupersededError } from '@muster/core';
import type { HeartbeatBackend, HeartbeatRecord } from '@muster/core/adapter';

interface Table {
  records: Map<string, HeartbeatRecord>;
  version: number;
  listeners: Set<() => void>;
}

const tables = new Map<string, Table>();

/** A record's copy (its payload is JSON by contract), so neither the writer nor a reader shares the stored object. */
const copy = <T>(record: T): T => JSON.parse(JSON.stringify(record)) as T;

function table(scope: string): Table {
  let t = tables.get(scope);
  if (!t) tables.set(scope, (t = { records: new Map(), version: 0, listeners: new Set() }));
  return t;
}

/** In-process heartbeats: every store in the same scope of one process shares one table. */
export class StaticHeartbeatBackend implements HeartbeatBackend {
  readonly #table: Table;

  constructor(options: { scope: string }) {
    this.#table = table(options.scope);
  }

  #changed(): void {
    for (const listener of this.#table.listeners) listener();
  }

  async write(record: Omit<HeartbeatRecord, 'version'>, { takeover }: { takeover: boolean }): Promise<void> {
    const old = this.#table.records.get(record.memberId);
    // One table in one process: the check and the write are atomic without a version compare.
    if (old && !takeover && old.incarnation !== record.incarnation)
      throw new SupersededError(record.memberId, record.incarnation, old.incarnation);
    // A copy: the caller may change its payload object after the beat (and readers get copies).
    this.#table.records.set(record.memberId, { ...copy(record), version: String(++this.#table.version) });
    this.#changed();
  }

  async read(memberId: string): Promise<HeartbeatRecord | undefined> {
    const record = this.#table.records.get(memberId);
    return record && copy(record);
  }

  async list(group: string | undefined): Promise<HeartbeatRecord[]> {
    return [...this.#table.records.values()].filter((r) => group === undefined || r.group === group).map(copy);
  }

  async remove(memberId: string): Promise<void> {
    if (this.#table.records.delete(memberId)) this.#changed();
  }

  async *views(group: string | undefined, { signal }: { signal: AbortSignal }): AsyncIterable<HeartbeatRecord[]> {
    let wake: (() => void) | undefined;
    let dirty = true;
    const listener = () => {
      dirty = true;
      wake?.();
    };
    this.#table.listeners.add(listener);
    const onAbort = () => wake?.();
    signal.addEventListener('abort', onAbort);
    try {
      while (!signal.aborted) {
        if (dirty) {
          dirty = false;
          yield await this.list(group);
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.#table.listeners.delete(listener);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
