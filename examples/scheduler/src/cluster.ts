import { randomUUID } from 'node:crypto';
import { createMuster, type Muster, type MusterConfig } from '@muster/core';
import { schedulerSchema, type SchedulerSettings } from './config.js';
import { LocalTaskStore } from './local-store.js';
import { silent, type SchedulerLog } from './log.js';
import { Master } from './master.js';
import { Worker } from './worker.js';
import { validate } from '@muster/core/adapter';

export interface InProcessClusterOptions {
  readonly masters: number;
  readonly workers: number;
  readonly settings?: Partial<SchedulerSettings>;
  readonly log?: (who: string) => SchedulerLog;
}

/**
 * Masters and workers in one process on the static adapter: one Muster each (so each master is
 * its own lock client, contending for the same in-process lock), sharing a LocalTaskStore.
 */
export class InProcessCluster implements AsyncDisposable {
  readonly store: LocalTaskStore;
  readonly settings: SchedulerSettings;
  readonly masters: Master[] = [];
  readonly workers: Worker[] = [];
  readonly #musters: Muster[] = [];

  private constructor(store: LocalTaskStore, settings: SchedulerSettings) {
    this.store = store;
    this.settings = settings;
  }

  static async start(options: InProcessClusterOptions): Promise<InProcessCluster> {
    const parsed = validate(schedulerSchema, options.settings ?? {}, ['scheduler']);
    if ('issues' in parsed) throw new Error(`scheduler settings: ${parsed.issues.map((i) => i.message).join('; ')}`);
    const cluster = new InProcessCluster(await LocalTaskStore.open(), parsed.value);
    const settings = parsed.value;
    const scope = `scheduler-${randomUUID()}`;
    const workerIds = Array.from({ length: options.workers }, (_, i) => `worker-${i}`);
    const config = (self: string | undefined): MusterConfig => ({
      version: 1,
      discovery: {
        adapter: 'static',
        options: {
          service: settings.service,
          members: workerIds.map((id, i) => ({ id, address: '127.0.0.1', port: 7000 + i })),
          ...(self ? { self } : {}),
        },
      },
      lock: { adapter: 'static', options: { scope } },
      heartbeat: { adapter: 'static', options: { scope } },
    });
    const log = options.log ?? (() => silent);
    try {
      for (let i = 0; i < options.masters; i++) {
        const muster = await createMuster(config(undefined));
        cluster.#musters.push(muster);
        const id = `master-${i}`;
        cluster.masters.push(
          new Master({
            id,
            lock: muster.lock,
            heartbeat: muster.heartbeat,
            store: cluster.store,
            lockName: settings.lockName,
            workerGroup: settings.workerGroup,
            leaseTtl: settings.leaseTtl,
            assignInterval: settings.assignInterval,
            log: log(id),
          }),
        );
      }
      for (const [i, id] of workerIds.entries()) {
        const muster = await createMuster(config(id));
        cluster.#musters.push(muster);
        const worker = new Worker({
          id,
          version: settings.version,
          store: cluster.store,
          heartbeat: muster.heartbeat,
          discovery: muster.discovery,
          service: settings.service,
          port: 7000 + i,
          group: settings.workerGroup,
          heartbeatTtl: settings.heartbeatTtl,
          beatInterval: settings.beatInterval,
          pollInterval: settings.pollInterval,
          capacity: settings.capacity,
          log: log(id),
        });
        await worker.start();
        cluster.workers.push(worker);
      }
      for (const master of cluster.masters) master.start();
    } catch (error) {
      await cluster.close();
      throw error;
    }
    return cluster;
  }

  leader(): Master | undefined {
    return this.masters.find((m) => m.isLeader);
  }

  async close(): Promise<void> {
    await Promise.all([...this.masters.map((m) => m.close()), ...this.workers.map((w) => w.close())]);
    for (const muster of this.#musters.reverse()) await muster.close();
    await this.store.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
