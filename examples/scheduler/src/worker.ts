import type { Discovery, HeartbeatStore, JsonValue } from '@muster/core';
import { sleep } from '@muster/core/adapter';
import { silent, type SchedulerLog } from './log.js';
import type { Task, TaskStore } from './task.js';

export interface WorkerOptions {
  readonly id: string;
  readonly version: string;
  readonly store: TaskStore;
  readonly heartbeat: HeartbeatStore;
  /** Where the worker registers itself (Consul); a no-op on static and Kubernetes. */
  readonly discovery?: Discovery | undefined;
  readonly service: string;
  readonly address?: string;
  readonly port?: number;
  readonly group: string;
  readonly heartbeatTtl: number;
  readonly beatInterval: number;
  readonly pollInterval: number;
  readonly capacity: number;
  readonly log?: SchedulerLog;
}

interface RunningTask {
  readonly attempt: number;
  readonly stop: AbortController;
  readonly done: Promise<void>;
}

/**
 * A worker: registers, beats heartbeats carrying its runtime data, and runs the tasks the table
 * says are assigned to it. It starts an attempt only if the table accepts the start (the task is
 * still its own), drops a task the leader moved elsewhere, and stops all work when its own beats
 * have failed for half a ttl — by then the leader may be about to declare it stale and hand its
 * tasks to someone else.
 */
export class Worker implements AsyncDisposable {
  readonly id: string;
  readonly #o: WorkerOptions;
  readonly #log: SchedulerLog;
  readonly #stop = new AbortController();
  readonly #running = new Map<string, RunningTask>();
  #crashed = false;
  #loops: Promise<unknown> = Promise.resolve();
  #lastBeat = 0;
  #cpu = process.cpuUsage();
  #cpuAt = Date.now();

  constructor(options: WorkerOptions) {
    this.id = options.id;
    this.#o = options;
    this.#log = options.log ?? silent;
  }

  get running(): readonly string[] {
    return [...this.#running.keys()];
  }

  async start(): Promise<void> {
    const { discovery, service, id, address, port, version } = this.#o;
    await discovery?.register({ service, id, address: address ?? '127.0.0.1', port: port ?? 0, metadata: { version, role: 'worker' } });
    try {
      await this.#beat();
    } catch (error) {
      // The backend may be restarting; the beat loop keeps trying, and until a beat lands the
      // leader simply does not see this worker.
      this.#log('beat-failed', { error: (error as Error).message });
    }
    this.#log('worker-started', { version });
    this.#loops = Promise.all([this.#beatLoop(), this.#pollLoop()]);
  }

  #payload(): JsonValue {
    const now = Date.now();
    const used = process.cpuUsage(this.#cpu);
    const cpu = now > this.#cpuAt ? (used.user + used.system) / 1000 / (now - this.#cpuAt) : 0;
    this.#cpu = process.cpuUsage();
    this.#cpuAt = now;
    return {
      cpu: Math.round(cpu * 1000) / 1000,
      memory: process.memoryUsage().rss,
      running: this.#running.size,
      capacity: this.#o.capacity,
      version: this.#o.version,
    };
  }

  async #beat(): Promise<void> {
    const sent = performance.now(); // monotonic: a wall-clock step must not delay the self-fence
    await this.#o.heartbeat.beat(this.id, this.#payload(), { ttl: this.#o.heartbeatTtl, group: this.#o.group, signal: this.#stop.signal });
    this.#lastBeat = sent;
  }

  async #beatLoop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      await sleep(this.#o.beatInterval, signal).catch(() => undefined);
      if (signal.aborted) break;
      try {
        await this.#beat();
      } catch (error) {
        if (signal.aborted) break;
        this.#log('beat-failed', { error: (error as Error).message });
      }
      if (performance.now() - this.#lastBeat > this.#o.heartbeatTtl / 2 && this.#running.size > 0) {
        this.#log('self-fenced', { tasks: this.running });
        for (const run of this.#running.values()) run.stop.abort();
      }
    }
  }

  async #pollLoop(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        this.#reconcile(await this.#o.store.tasks({ signal }));
      } catch (error) {
        if (!signal.aborted) this.#log('table-unreachable', { error: (error as Error).message });
      }
      await sleep(this.#o.pollInterval, signal).catch(() => undefined);
    }
  }

  #reconcile(tasks: Task[]): void {
    for (const [taskId, run] of this.#running) {
      const task = tasks.find((t) => t.id === taskId);
      if (task && (task.worker !== this.id || task.attempt !== run.attempt)) run.stop.abort();
    }
    const mine = tasks.filter((t) => t.worker === this.id && t.status === 'assigned' && !this.#running.has(t.id));
    for (const task of mine.slice(0, Math.max(0, this.#o.capacity - this.#running.size))) this.#run(task);
  }

  #run(task: Task): void {
    const stop = new AbortController();
    const signal = AbortSignal.any([stop.signal, this.#stop.signal]);
    const { store } = this.#o;
    const done = (async () => {
      try {
        if (!(await store.start(task.id, task.attempt, this.id, { signal }))) return;
        this.#log('task-started', { task: task.id, attempt: task.attempt });
        await sleep(task.durationMs, signal);
        const counted = await store.finish(task.id, task.attempt, this.id, { signal });
        this.#log(counted ? 'task-done' : 'task-result-discarded', { task: task.id, attempt: task.attempt });
      } catch (error) {
        if (this.#crashed) return;
        await store.abandon(task.id, task.attempt, this.id).catch(() => undefined);
        this.#log('task-abandoned', { task: task.id, attempt: task.attempt, why: (error as Error).message });
      } finally {
        this.#running.delete(task.id);
      }
    })();
    this.#running.set(task.id, { attempt: task.attempt, stop, done });
  }

  /** Test hook, the in-process stand-in for SIGKILL: everything stops, nothing more is written. */
  async crash(): Promise<void> {
    this.#crashed = true;
    this.#stop.abort();
    await this.#loops;
    await Promise.all([...this.#running.values()].map((r) => r.done));
  }

  /** Graceful stop: running attempts are abandoned, the heartbeat is removed so the leader reassigns at once. */
  async close(): Promise<void> {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    await this.#loops;
    await Promise.all([...this.#running.values()].map((r) => r.done));
    await this.#o.heartbeat.remove(this.id).catch(() => undefined);
    await this.#o.discovery?.deregister().catch(() => undefined);
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
