import {
  LeaderElector,
  StaleTokenError,
  type HeartbeatStore,
  type JsonValue,
  type Lease,
  type Lock,
  type MemberHeartbeat,
} from '@muster/core';
import { sleep } from '@muster/core/adapter';
import { simulateCrash } from '@muster/core/testing';
import { planAssignments, type WorkerView } from './assignment.js';
import { silent, type SchedulerLog } from './log.js';
import type { Task, TaskStore } from './task.js';

export interface MasterOptions {
  readonly id: string;
  readonly lock: Lock;
  readonly heartbeat: HeartbeatStore;
  readonly store: TaskStore;
  readonly lockName: string;
  readonly workerGroup: string;
  /** Lease ttl: the bound on how long a dead leader blocks its successor. */
  readonly leaseTtl?: number | undefined;
  readonly assignInterval: number;
  readonly log?: SchedulerLog;
}

function asRecord(payload: JsonValue): Record<string, JsonValue> {
  return typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? payload : {};
}

function toView(m: MemberHeartbeat): WorkerView {
  const payload = asRecord(m.payload);
  const num = (v: JsonValue | undefined, fallback: number) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
  return { id: m.memberId, alive: m.alive, running: num(payload.running, 0), capacity: num(payload.capacity, 1) };
}

/**
 * A master: campaigns with the LeaderElector and, while leading, assigns tasks. Its first write as
 * leader seals the table with its fencing token; every later write carries the token too, so the
 * table refuses a master that lost leadership without noticing. Leader work stops when the lease's
 * onLost fires or a write is refused, whichever comes first.
 */
export class Master implements AsyncDisposable {
  readonly id: string;
  readonly #options: MasterOptions;
  readonly #log: SchedulerLog;
  readonly #stop = new AbortController();
  readonly #elector: LeaderElector;
  #campaign: Promise<void> | undefined;
  #leading: Promise<void> = Promise.resolve();
  #leadingNow = false;

  constructor(options: MasterOptions) {
    this.id = options.id;
    this.#options = options;
    this.#log = options.log ?? silent;
    this.#elector = new LeaderElector(options.lock, options.lockName, { ttl: options.leaseTtl, signal: this.#stop.signal });
    this.#elector.onElected((lease) => {
      this.#leading = this.#lead(lease);
    });
    this.#elector.onDemoted(async (reason) => {
      this.#log('demoted', { reason: (reason as Error | undefined)?.message });
      await this.#leading;
    });
  }

  /** Leading and not fenced out: holds the lease as far as it knows, and its last write was accepted. */
  get isLeader(): boolean {
    return this.#leadingNow && this.#elector.isLeader;
  }

  /** The fencing token of the current leadership. */
  get token(): bigint | undefined {
    return this.isLeader ? this.#elector.lease?.token : undefined;
  }

  start(): void {
    this.#campaign ??= this.#elector.campaign().catch((error: unknown) => {
      this.#log('campaign-failed', { error: (error as Error).message });
    });
  }

  async #lead(lease: Lease): Promise<void> {
    const done = new AbortController();
    const signal = AbortSignal.any([lease.onLost, this.#stop.signal, done.signal]);
    this.#log('elected', { token: lease.token });
    const workers = new Map<string, MemberHeartbeat>();
    let seen = false;
    const watching = (async () => {
      try {
        for await (const event of this.#options.heartbeat.watch(this.#options.workerGroup, { signal })) {
          workers.clear();
          for (const m of event.members) workers.set(m.memberId, m);
          seen = true;
          if (event.type === 'snapshot')
            this.#log('workers', { alive: event.members.filter((m) => m.alive).map((m) => ({ id: m.memberId, ...asRecord(m.payload) })) });
          else if (event.type === 'joined' || event.type === 'replaced')
            this.#log('worker-joined', { worker: event.member.memberId, ...asRecord(event.member.payload) });
          else if (event.type === 'stale' || event.type === 'left')
            this.#log('worker-lost', { worker: event.member.memberId, how: event.type });
        }
      } catch (error) {
        if (!signal.aborted) this.#log('watch-failed', { error: (error as Error).message });
      }
    })();
    this.#leadingNow = true;
    try {
      while (!signal.aborted) {
        // Every round starts with a fenced write (the table records the leader's last tick). The
        // first one seals the table against older leaders; for a leader that lost its lease without
        // noticing, it is the write that gets refused.
        if (await this.#tick(lease, signal)) {
          // Assign only from a heartbeat view: before the first snapshot everyone would look dead.
          if (seen) await this.#round(lease, [...workers.values()], signal);
        }
        await sleep(this.#options.assignInterval, signal).catch(() => undefined);
      }
    } catch (error) {
      if (error instanceof StaleTokenError) {
        // A store that refuses by itself (the Cassandra fence) says which token it holds.
        const { storedToken } = error as StaleTokenError & { storedToken?: bigint };
        this.#log('fenced', {
          token: error.token,
          highest: error.highest,
          ...(storedToken === undefined ? {} : { storedToken, error: error.message }),
        });
      } else if (!signal.aborted) this.#log('leader-failed', { error: (error as Error).message });
      // Give the lease up (a no-op if it is already gone): the elector demotes us and campaigns again.
      await lease.release().catch(() => undefined);
    } finally {
      this.#leadingNow = false;
      done.abort();
      await watching;
    }
  }

  /** False when the table could not be reached this round; throws StaleTokenError when fenced out. */
  async #tick(lease: Lease, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#options.store.seal(lease.token, this.id, { signal, lease });
      return true;
    } catch (error) {
      if (error instanceof StaleTokenError) throw error;
      if (!signal.aborted) this.#log('table-unreachable', { error: (error as Error).message });
      return false;
    }
  }

  async #round(lease: Lease, members: MemberHeartbeat[], signal: AbortSignal): Promise<void> {
    const { store } = this.#options;
    const { token } = lease;
    let tasks: Task[];
    try {
      tasks = await store.tasks({ signal });
    } catch (error) {
      if (!signal.aborted) this.#log('table-unreachable', { error: (error as Error).message });
      return;
    }
    const plan = planAssignments(tasks, members.map(toView));
    if (plan.length === 0 || signal.aborted) return;
    const before = new Map(tasks.map((t) => [t.id, t.worker]));
    try {
      const outcome = await store.assign(token, this.id, plan, { signal, lease });
      for (const a of plan.filter((p) => outcome.applied.includes(p.taskId))) {
        const from = before.get(a.taskId);
        this.#log(from === undefined ? 'assigned' : 'reassigned', { task: a.taskId, worker: a.worker, from, token });
      }
    } catch (error) {
      if (error instanceof StaleTokenError) throw error;
      if (!signal.aborted) this.#log('assign-failed', { error: (error as Error).message });
    }
  }

  /**
   * Test hook, the in-process stand-in for SIGKILL: renewals stop without a release and all work
   * stops, so the next master must wait out the lease.
   */
  async crash(): Promise<void> {
    crashLock(this.#options.lock);
    await this.close();
  }

  /**
   * Test hook for a paused leader: its lease silently stops renewing (as in a long GC pause or a
   * partition) but it keeps working, believing it still leads. Only fencing stops its writes.
   */
  freezeLease(): void {
    crashLock(this.#options.lock);
  }

  async close(): Promise<void> {
    if (!this.#stop.signal.aborted) this.#stop.abort();
    await this.#elector.resign();
    await this.#campaign;
    await this.#leading;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

function crashLock(lock: Lock): void {
  const hook = (lock as Lock & Partial<Record<typeof simulateCrash, () => void>>)[simulateCrash];
  if (!hook) throw new Error('this lock client has no simulateCrash hook');
  hook.call(lock);
}
