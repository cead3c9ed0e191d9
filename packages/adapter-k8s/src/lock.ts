import { InvalidArgumentError, LockLostError, systemClock, type Clock } from '@muster/core';
import {
  fencingTokenFloor,
  nextFencingToken,
  parseFencingToken,
  sleep,
  type BackendCallOptions,
  type LeaseGrant,
  type LockBackend,
} from '@muster/core/adapter';
import { isConflict, KubernetesError, leases, type KubeClient } from './client.js';
import {
  acquiredSpec,
  fencingTokenAnnotation,
  judge,
  leaseNamePattern,
  observe,
  releasedSpec,
  renewedSpec,
  type LeaseObject,
  type Observation,
} from './lease-record.js';

export interface LeaseLockOptions {
  readonly client: KubeClient;
  /** holderIdentity written into the Lease; unique per client (two clients with one identity would both hold). */
  readonly holder: string;
  /** Judges expiry and deadlines (monotonic; core's systemClock by default). */
  readonly clock?: Clock;
  /**
   * Wall-clock milliseconds since the Unix epoch (Date.now by default): the floor of fencing tokens,
   * and the acquireTime / renewTime written into the Lease, which client-go and kubectl read as wall time.
   */
  readonly wallClock?: () => number;
  /** Added to the lock name to form the Lease name (e.g. `muster-lock-`). */
  readonly leasePrefix?: string;
}

/** What a grant carries to the next renew or release: the Lease as we last wrote it. */
interface Held {
  readonly lease: LeaseObject;
}

/**
 * A lock on a coordination.k8s.io/v1 Lease per lock name, the record client-go's leader election
 * uses, so Go controllers and Muster processes contend for one Lease correctly.
 *
 * - Writes are optimistic (PUT with the resourceVersion read): a 409 Conflict means another
 *   contender wrote first and this attempt lost; createLock() retries per the retry period.
 * - A held Lease counts as expired only after its published leaseDurationSeconds has passed since
 *   this process observed the record change (client-go's rule), never by its renewTime.
 * - Fencing token: the `muster.io/fencing-token` annotation, written by the same optimistic write
 *   that takes the Lease, and never below the acquirer's wall clock in µs, so it keeps rising when
 *   the Lease is deleted and created again (core's coordination/fencing-token.ts states the exact condition).
 *   leaseTransitions is still bumped on every acquisition, as client-go expects.
 * - Release writes an empty holder and a 1 s duration (as client-go does on ReleaseOnCancel), so
 *   a waiting contender takes over at its next retry instead of after a whole lease.
 * - Leases are never deleted, so the RBAC needs only get, create and update on leases.
 */
export class LeaseLockBackend implements LockBackend {
  readonly holder: string;
  readonly #client: KubeClient;
  readonly #clock: Clock;
  readonly #wallClock: () => number;
  readonly #prefix: string;
  readonly #observed = new Map<string, Observation>();
  /** Local time until which this client itself holds a name; a lock is not re-entrant. */
  readonly #heldUntil = new Map<string, number>();
  /** The highest token this process has read or issued per lock: a floor a deleted Lease cannot take away. */
  readonly #seen = new Map<string, bigint>();
  /** Local time at which a refused contender may find the Lease free (its holder's expiry as observed). */
  readonly #freeAt = new Map<string, number>();
  /** Acquires whose answer was lost, being given back (#outcomeUnknown); close() waits for them. */
  readonly #givingBack = new Set<Promise<void>>();
  readonly #closing = new AbortController();

  constructor(options: LeaseLockOptions) {
    this.holder = options.holder;
    this.#client = options.client;
    this.#clock = options.clock ?? systemClock;
    this.#wallClock = options.wallClock ?? Date.now;
    this.#prefix = options.leasePrefix ?? '';
  }

  #leaseName(name: string): string {
    const leaseName = `${this.#prefix}${name}`;
    if (leaseName.length > 253 || !leaseNamePattern.test(leaseName)) {
      throw new InvalidArgumentError(
        `lock name '${name}' gives Lease name '${leaseName}', which Kubernetes refuses: use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters`,
      );
    }
    return leaseName;
  }

  #grant(name: string, lease: LeaseObject, token: bigint, ttl: number, sentAt: number): LeaseGrant {
    this.#observed.set(name, observe(undefined, lease.spec, this.#clock.now()));
    this.#heldUntil.set(name, sentAt + ttl);
    const held: Held = { lease };
    return { token, state: held };
  }

  /**
   * The token of an acquisition of `name` that replaces `current` (undefined: a Lease to create):
   * above what the Lease carries and this process saw, at least this host's wall clock and, when
   * taking over a Lease someone else created (client-go, or anyone after a deletion, with no token
   * annotation), at least the API server's creationTimestamp of it (see #atLeastServerTime).
   */
  #nextToken(name: string, current: LeaseObject | undefined): bigint {
    const own = fencingTokenFloor(this.#wallClock());
    const stamp = serverStampFloor(current);
    const token = nextFencingToken(this.#see(name, current), this.#seen.get(name), stamp !== undefined && stamp > own ? stamp : own);
    this.#seen.set(name, token);
    return token;
  }

  /**
   * A Lease this client just created carries no history: its token came from this host's wall clock
   * alone, and a host whose clock is behind would hand out a token below those of the Lease that
   * was deleted. The API server stamped the creation with its own clock (creationTimestamp: whole
   * seconds, truncated, so never ahead of it); a token below that stamp is raised to it before the
   * grant is handed out, in a write checked against the Lease just created. A recreated Lease is so
   * ordered by the later of two clocks, this host's and the API server's. If the raise fails, its
   * error goes to createLock (a 409 or 5xx is retried, and the retry takes our own Lease over with a
   * token above the stamp): the low token is never handed out.
   */
  async #atLeastServerTime(
    name: string,
    created: LeaseObject,
    token: bigint,
    signal: AbortSignal,
  ): Promise<{ lease: LeaseObject; token: bigint }> {
    const floor = serverStampFloor(created);
    if (floor === undefined || floor <= token) return { lease: created, token };
    this.#seen.set(name, floor);
    const annotations = { ...created.metadata?.annotations, [fencingTokenAnnotation]: floor.toString() };
    const lease = await this.#client.replace(leases, { ...created, metadata: { ...created.metadata, annotations } }, { signal });
    return { lease, token: floor };
  }

  /** Remembers the token a read Lease carries, so this process never issues one below it. */
  #see(name: string, lease: LeaseObject | undefined): bigint | undefined {
    const stored = parseFencingToken(lease?.metadata?.annotations?.[fencingTokenAnnotation]);
    const seen = this.#seen.get(name);
    if (stored !== undefined && (seen === undefined || stored > seen)) this.#seen.set(name, stored);
    return stored;
  }

  async tryAcquire(name: string, { ttl, signal }: BackendCallOptions): Promise<LeaseGrant | undefined> {
    const leaseName = this.#leaseName(name);
    const sentAt = this.#clock.now();
    const current = await this.#client.get<LeaseObject>(leases, leaseName, { signal });
    if (!current) {
      const token = this.#nextToken(name, undefined);
      const body: LeaseObject = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: leaseName,
          labels: { 'app.kubernetes.io/managed-by': 'muster' },
          annotations: { [fencingTokenAnnotation]: token.toString() },
        },
        spec: acquiredSpec(undefined, this.holder, ttl, this.#wallClock()),
      };
      try {
        const created = await this.#client.create(leases, body, { signal });
        const raised = await this.#atLeastServerTime(name, created, token, signal);
        return this.#grant(name, raised.lease, raised.token, ttl, sentAt);
      } catch (error) {
        if (isConflict(error)) return undefined; // AlreadyExists: another contender created it first
        throw this.#outcomeUnknown(leaseName, undefined, token, error);
      }
    }
    this.#see(name, current);
    // Observed now, after the read: a later sighting can only make us wait longer.
    const now = this.#clock.now();
    const observation = observe(this.#observed.get(name), current.spec, now);
    this.#observed.set(name, observation);
    const heldUntil = this.#heldUntil.get(name) ?? 0;
    if (heldUntil > now) {
      this.#freeAt.set(name, heldUntil);
      return undefined;
    }
    const verdict = judge(current.spec, observation, this.holder, now);
    if (!verdict.free) {
      this.#freeAt.set(name, verdict.until);
      return undefined;
    }
    this.#freeAt.delete(name);
    // Fields we do not manage (strategy, preferredHolder, others' annotations) stay as they are.
    const token = this.#nextToken(name, current);
    const next: LeaseObject = {
      ...current,
      metadata: { ...current.metadata, annotations: { ...current.metadata?.annotations, [fencingTokenAnnotation]: token.toString() } },
      spec: { ...current.spec, ...acquiredSpec(current.spec, this.holder, ttl, this.#wallClock()) },
    };
    try {
      return this.#grant(name, await this.#client.replace(leases, next, { signal }), token, ttl, sentAt);
    } catch (error) {
      if (isConflict(error)) return undefined; // somebody else won this round
      throw this.#outcomeUnknown(leaseName, current.metadata?.resourceVersion, token, error);
    }
  }

  /**
   * An acquiring write failed without the API server's refusal (aborted, cut off, timed out once
   * sent): it may have been applied, and nobody will hold that grant. Watches the Lease in the
   * background for a short while and releases it if it carries that write: a resourceVersion other
   * than the one the write was based on (`undefined`: a create), this holder and the write's token
   * (a create's may have been raised to the server's stamp). Any other write ends the watch, a
   * later acquisition of this same client included; close() ends it (a write not seen by then
   * expires with its duration). Returns `error`, for the caller to throw.
   */
  #outcomeUnknown(leaseName: string, basedOn: string | undefined, token: bigint, error: unknown): unknown {
    if (error instanceof KubernetesError && error.status !== undefined && error.status < 500) return error; // refused: not applied
    if (neverSent(error)) return error;
    const signal = AbortSignal.any([AbortSignal.timeout(giveBackMs), this.#closing.signal]);
    const done: Promise<void> = (async () => {
      while (!signal.aborted) {
        // A read that fails (the server still unreachable) is tried again until the watch ends.
        const current = await this.#client.get<LeaseObject>(leases, leaseName, { signal }).catch((failure: unknown) => {
          if (signal.aborted) throw failure;
          return sleep(giveBackPoll, signal).then((): typeof unread => unread);
        });
        if (current === unread) continue;
        const version = current?.metadata?.resourceVersion;
        if (current && version !== basedOn) {
          const stored = parseFencingToken(current.metadata?.annotations?.[fencingTokenAnnotation]);
          const raised = basedOn === undefined ? serverStampFloor(current) : undefined;
          if (current.spec?.holderIdentity !== this.holder || (stored !== token && stored !== raised)) return;
          await this.#client.replace(leases, { ...current, spec: releasedSpec(current.spec, this.#wallClock()) }, { signal });
          return;
        }
        await sleep(giveBackPoll, signal);
      }
    })()
      .catch((failure: unknown) => {
        if (signal.aborted || isConflict(failure)) return; // it never landed, or somebody else wrote since
        process.emitWarning(
          `Lease '${leaseName}': an acquire whose answer was lost could not be given back; if it was applied, the Lease is free after its duration: ${(failure as Error)?.message ?? String(failure)}`,
          { type: 'MusterWarning', code: 'MUSTER_RELEASE_FAILED' },
        );
      })
      .finally(() => this.#givingBack.delete(done));
    this.#givingBack.add(done);
    return error;
  }

  async renew(name: string, grant: LeaseGrant, { ttl, signal }: BackendCallOptions): Promise<LeaseGrant> {
    const { lease } = grant.state as Held;
    const sentAt = this.#clock.now();
    try {
      const renewed = await this.#client.replace(
        leases,
        { ...lease, spec: renewedSpec(lease.spec ?? {}, ttl, this.#wallClock()) },
        { signal },
      );
      return this.#grant(name, renewed, grant.token, ttl, sentAt);
    } catch (error) {
      if (!isConflict(error)) throw this.#lostIfGone(name, error);
    }
    // Somebody wrote the Lease since our last write: a label change, or a takeover.
    const current = await this.#client.get<LeaseObject>(leases, lease.metadata!.name!, { signal });
    const reason = this.#notOurs(current, lease, grant.token);
    if (reason) {
      this.#heldUntil.delete(name);
      throw new LockLostError(name, reason);
    }
    try {
      const renewed = await this.#client.replace(
        leases,
        { ...current!, spec: renewedSpec(current!.spec ?? {}, ttl, this.#wallClock()) },
        { signal },
      );
      return this.#grant(name, renewed, grant.token, ttl, sentAt);
    } catch (error) {
      throw this.#lostIfGone(name, error);
    }
  }

  /** Why `current` is no longer the Lease we hold, or undefined when it still is. */
  #notOurs(current: LeaseObject | undefined, mine: LeaseObject, token: bigint): string | undefined {
    if (!current) return 'the Lease was deleted';
    if (current.metadata?.uid !== mine.metadata?.uid) return 'the Lease was deleted and created again';
    const holder = current.spec?.holderIdentity ?? '';
    if (holder !== this.holder) return holder ? `'${holder}' holds the Lease now` : 'the Lease was released by someone else';
    if (parseFencingToken(current.metadata?.annotations?.[fencingTokenAnnotation]) !== token)
      return 'the Lease changed hands in the meantime';
    return undefined;
  }

  #lostIfGone(name: string, error: unknown): unknown {
    if (error instanceof KubernetesError && error.status === 404) {
      this.#heldUntil.delete(name);
      return new LockLostError(name, 'the Lease was deleted', { cause: error });
    }
    return error;
  }

  async release(name: string, grant: LeaseGrant, { signal }: { signal: AbortSignal }): Promise<void> {
    this.#heldUntil.delete(name);
    const { lease } = grant.state as Held;
    try {
      await this.#client.replace(leases, { ...lease, spec: releasedSpec(lease.spec ?? {}, this.#wallClock()) }, { signal });
      return;
    } catch (error) {
      if (error instanceof KubernetesError && error.status === 404) return;
      if (!isConflict(error)) throw error;
    }
    const current = await this.#client.get<LeaseObject>(leases, lease.metadata!.name!, { signal });
    if (this.#notOurs(current, lease, grant.token)) return; // someone else holds it: nothing of ours to release
    await this.#client.replace(leases, { ...current!, spec: releasedSpec(current!.spec ?? {}, this.#wallClock()) }, { signal });
  }

  /**
   * Waits out the retry period, or less when the holder's observed expiry comes first: a contender
   * then tries again as the Lease expires instead of up to a retry period later, so failover after
   * a holder dies is at most the ttl plus one retry period (the lag in seeing its last renewal).
   */
  async waitForChange(name: string, { signal, maxWaitMs }: { signal: AbortSignal; maxWaitMs: number }): Promise<void> {
    const freeAt = this.#freeAt.get(name);
    const wait = freeAt === undefined ? maxWaitMs : Math.min(maxWaitMs, Math.max(0, freeAt - this.#clock.now()));
    await sleep(wait, signal);
  }

  async close(): Promise<void> {
    this.#closing.abort(); // a write not seen by now is left to expire
    await Promise.allSettled([...this.#givingBack]);
    this.#client.close();
  }
}

/** A read of the give-back that failed (tried again). */
const unread = Symbol('unread');

/** Node's codes for a connection that was never made: a request that failed so was never sent. */
const notConnected = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const neverSent = (error: unknown): boolean => {
  const code = ((error as { cause?: { code?: unknown } })?.cause ?? (error as { code?: unknown }))?.code;
  return typeof code === 'string' && notConnected.has(code);
};

/** How long an acquire whose answer was lost is watched for having been applied (#outcomeUnknown), and how often. */
const giveBackMs = 5000;
const giveBackPoll = 250;

/** The token the API server's creationTimestamp of `lease` stands for (its own clock); undefined without one. */
function serverStampFloor(lease: LeaseObject | undefined): bigint | undefined {
  const stamped = Date.parse(lease?.metadata?.creationTimestamp ?? '');
  return Number.isFinite(stamped) ? fencingTokenFloor(stamped) : undefined;
}
