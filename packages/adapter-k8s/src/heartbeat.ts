import { createHash } from 'node:crypto';
import { InvalidArgumentError, SupersededError, type JsonValue } from '@muster/core';
import type { HeartbeatBackend, HeartbeatRecord } from '@muster/core/adapter';
import { isConflict, isGone, leases, microTime, type KubeClient } from './client.js';
import { leaseNamePattern, leaseSeconds, type LeaseObject } from './lease-record.js';

export const groupLabel = 'muster.io/heartbeat-group';
const memberAnnotation = 'muster.io/member-id';
const incarnationAnnotation = 'muster.io/incarnation';
const payloadAnnotation = 'muster.io/payload';
const ttlAnnotation = 'muster.io/ttl-ms';

/** Label values: at most 63 characters, alphanumerics with '-', '_', '.' inside. */
const labelValuePattern = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export interface LeaseHeartbeatOptions {
  readonly client: KubeClient;
  /** Prefix of the Lease names, so heartbeats and lock Leases in one namespace never collide. */
  readonly leasePrefix?: string;
  /** How long the server keeps one watch open before we re-watch (s). */
  readonly watchTimeoutSeconds?: number;
}

/**
 * Heartbeats as one coordination.k8s.io/v1 Lease per member, the way kubelets publish node
 * heartbeats in kube-node-lease: holderIdentity is the member, renewTime and leaseDurationSeconds
 * say when it beat and for how long, the group is a label (so a watch selects by it), and the JSON
 * payload, the exact ttl and the writer's incarnation are annotations.
 *
 * Every write is a PUT with the resourceVersion last seen, so the incarnation check and the write
 * are one atomic step, ordered by the apiserver: a new incarnation's first write (takeover) PUTs
 * over whatever it read; an old incarnation's next PUT then gets 409, reads the record, finds
 * another incarnation and stops with SupersededError.
 */
export class LeaseHeartbeatBackend implements HeartbeatBackend {
  readonly #client: KubeClient;
  readonly #prefix: string;
  readonly #watchTimeout: number;
  /** Our last write per Lease, so a steady beat is one PUT rather than GET + PUT. */
  readonly #written = new Map<string, LeaseObject>();

  constructor(options: LeaseHeartbeatOptions) {
    this.#client = options.client;
    this.#prefix = options.leasePrefix ?? 'muster-hb-';
    this.#watchTimeout = options.watchTimeoutSeconds ?? 300;
  }

  /** A valid Lease name for any member id: the id itself when it is one, else a readable part plus a hash. */
  leaseName(memberId: string): string {
    const plain = `${this.#prefix}${memberId}`;
    if (plain.length <= 253 && leaseNamePattern.test(plain)) return plain;
    const readable = memberId
      .toLowerCase()
      .replace(/[^a-z0-9.-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 200);
    const hash = createHash('sha256').update(memberId).digest('hex').slice(0, 12);
    return `${this.#prefix}${readable ? `${readable}-` : ''}${hash}`;
  }

  #selector(group: string | undefined): string {
    return group === undefined ? groupLabel : `${groupLabel}=${checkGroup(group)}`;
  }

  /**
   * The record of a Lease this store writes, else undefined. The label selector finds every store's
   * heartbeat Leases in the namespace; the name tells ours apart: it is leaseName() of the member it
   * carries, exactly the Lease get() and remove() reach. Leases of older versions are named the same
   * way, so they stay visible without a migration.
   */
  #ours(lease: LeaseObject): HeartbeatRecord | undefined {
    const record = toRecord(lease);
    return record && lease.metadata?.name === this.leaseName(record.memberId) ? record : undefined;
  }

  async write(record: Omit<HeartbeatRecord, 'version'>, { signal, takeover }: { signal: AbortSignal; takeover: boolean }): Promise<void> {
    const name = this.leaseName(record.memberId);
    const now = Date.now();
    const metadata = {
      name,
      labels: { 'app.kubernetes.io/managed-by': 'muster', [groupLabel]: checkGroup(record.group) },
      annotations: {
        [memberAnnotation]: record.memberId,
        [incarnationAnnotation]: record.incarnation,
        [payloadAnnotation]: JSON.stringify(record.payload),
        [ttlAnnotation]: String(record.ttl),
      },
    };
    const spec = { holderIdentity: record.memberId, leaseDurationSeconds: leaseSeconds(record.ttl), renewTime: microTime(now) };
    let lastConflict: unknown;
    for (let attempt = 0; attempt < 4; attempt++) {
      const base = this.#written.get(name) ?? (await this.#client.get<LeaseObject>(leases, name, { signal }));
      if (!base) {
        try {
          const created = await this.#client.create<LeaseObject>(
            leases,
            {
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata,
              spec: { ...spec, acquireTime: spec.renewTime, leaseTransitions: 0 },
            },
            { signal },
          );
          this.#written.set(name, created);
          return;
        } catch (error) {
          if (!isConflict(error)) throw error;
          lastConflict = error;
          continue; // created by someone else meanwhile: read it and judge its incarnation
        }
      }
      const theirs = base.metadata?.annotations?.[incarnationAnnotation] ?? '';
      if (!takeover && theirs !== record.incarnation) {
        this.#written.delete(name);
        throw new SupersededError(record.memberId, record.incarnation, theirs);
      }
      const holderChanged = base.spec?.holderIdentity !== record.memberId || theirs !== record.incarnation;
      try {
        const written = await this.#client.replace<LeaseObject>(
          leases,
          {
            ...base,
            metadata: {
              ...base.metadata,
              ...metadata,
              labels: { ...base.metadata?.labels, ...metadata.labels },
              annotations: { ...base.metadata?.annotations, ...metadata.annotations },
            },
            spec: {
              ...base.spec,
              ...spec,
              ...(holderChanged ? { acquireTime: spec.renewTime, leaseTransitions: (base.spec?.leaseTransitions ?? 0) + 1 } : {}),
            },
          },
          { signal },
        );
        this.#written.set(name, written);
        return;
      } catch (error) {
        this.#written.delete(name);
        if (!isConflict(error)) throw error;
        lastConflict = error;
      }
    }
    throw lastConflict;
  }

  async read(memberId: string, { signal }: { signal: AbortSignal }): Promise<HeartbeatRecord | undefined> {
    const lease = await this.#client.get<LeaseObject>(leases, this.leaseName(memberId), { signal });
    return lease && toRecord(lease);
  }

  async list(group: string | undefined, { signal }: { signal: AbortSignal }): Promise<HeartbeatRecord[]> {
    const { items } = await this.#client.list<LeaseObject>(leases, { labelSelector: this.#selector(group), signal });
    return items.map((lease) => this.#ours(lease)).filter((r): r is HeartbeatRecord => r !== undefined);
  }

  /**
   * List, then watch from the list's resourceVersion; relists on 410 Gone. Other failures end it (the
   * store backs off and restarts it). A watch silent for twice the longest ttl (see quietWatchLimit)
   * is ended and opened again from its resourceVersion.
   */
  async *views(group: string | undefined, { signal }: { signal: AbortSignal }): AsyncIterable<HeartbeatRecord[]> {
    const labelSelector = this.#selector(group);
    const byName = new Map<string, HeartbeatRecord>();
    const view = () => [...byName.values()];
    let resourceVersion = '';
    const relist = async () => {
      const list = await this.#client.list<LeaseObject>(leases, { labelSelector, signal });
      byName.clear();
      for (const lease of list.items) {
        const record = this.#ours(lease);
        if (record) byName.set(lease.metadata!.name!, record);
      }
      resourceVersion = list.resourceVersion;
    };
    await relist();
    yield view();
    while (!signal.aborted) {
      try {
        for await (const event of this.#client.watch<LeaseObject>(leases, {
          labelSelector,
          resourceVersion,
          timeoutSeconds: this.#watchTimeout,
          idleTimeout: quietWatchLimit(byName.values()),
          signal,
        })) {
          resourceVersion = event.object.metadata?.resourceVersion ?? resourceVersion;
          if (event.type === 'BOOKMARK') continue;
          const name = event.object.metadata?.name ?? '';
          const record = event.type === 'DELETED' ? undefined : this.#ours(event.object);
          if (record) byName.set(name, record);
          else byName.delete(name);
          yield view();
        }
      } catch (error) {
        if (!isGone(error)) throw error;
        await relist();
        yield view();
      }
    }
  }

  async remove(memberId: string, { signal }: { signal: AbortSignal }): Promise<void> {
    const name = this.leaseName(memberId);
    this.#written.delete(name);
    await this.#client.delete(leases, name, { signal });
  }

  async close(): Promise<void> {
    this.#client.close();
  }
}

/**
 * How long a heartbeat watch may stay silent before it is opened again: twice the longest ttl of the
 * members it shows (5 s at least, the client's 90 s at most). Members that beat keep it busy, so
 * only a quiet group pays the re-watches; but a connection that swallows bytes without failing (a
 * black hole) would otherwise leave the watcher blind for 90 s after the network was back, every
 * member reading stale meanwhile.
 */
function quietWatchLimit(records: Iterable<HeartbeatRecord>): number {
  let longest = 0;
  for (const r of records) longest = Math.max(longest, r.ttl);
  return Math.min(90_000, Math.max(5000, 2 * longest));
}

function checkGroup(group: string): string {
  if (group.length > 63 || !labelValuePattern.test(group) || group === '') {
    throw new InvalidArgumentError(
      `heartbeat group '${group}' cannot be a Kubernetes label value: use at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit`,
    );
  }
  return group;
}

/** A heartbeat Lease as the store sees it; undefined for a Lease that is not one of ours. */
export function toRecord(lease: LeaseObject): HeartbeatRecord | undefined {
  const meta = lease.metadata;
  const group = meta?.labels?.[groupLabel];
  if (!meta?.name || group === undefined) return undefined;
  const annotations = meta.annotations ?? {};
  let payload: JsonValue = null;
  try {
    payload = JSON.parse(annotations[payloadAnnotation] ?? 'null') as JsonValue;
  } catch {
    // A hand-edited annotation must not break every watcher of the group.
  }
  const ttlMs = Number(annotations[ttlAnnotation]);
  const renewedAt = lease.spec?.renewTime ? Date.parse(lease.spec.renewTime) : NaN;
  return {
    memberId: annotations[memberAnnotation] ?? lease.spec?.holderIdentity ?? meta.name,
    group,
    payload,
    ttl: Number.isFinite(ttlMs) && ttlMs > 0 ? ttlMs : (lease.spec?.leaseDurationSeconds ?? 0) * 1000,
    incarnation: annotations[incarnationAnnotation] ?? '',
    version: meta.resourceVersion ?? '',
    ...(Number.isFinite(renewedAt) ? { renewedAt } : {}),
  };
}
