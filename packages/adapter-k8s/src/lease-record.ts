/**
 * The leader-election record of a coordination.k8s.io/v1 Lease, and how a contender judges it.
 * Pure logic, no I/O: the lock and its tests share it.
 *
 * The record is the one client-go's leader election reads and writes (holderIdentity,
 * leaseDurationSeconds, acquireTime, renewTime, leaseTransitions), so a Go controller and a Muster
 * process contend correctly for one Lease. Expiry is judged the way client-go judges it: from the
 * moment *this process* saw the record change, plus the duration the holder published. The remote
 * renewTime is never compared with the local clock, so clock offsets between machines do not
 * matter; only clock *rates* do, within the margin between ttl and renew deadline.
 */
import { microTime, type KubeObject } from './client.js';

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

export interface LeaseObject extends KubeObject {
  apiVersion?: string;
  kind?: string;
  spec?: LeaseSpec;
}

/** What one observer remembers of one Lease. */
export interface Observation {
  /** The record's fields as text: a change of any of them is a renewal (or a takeover). */
  readonly record: string;
  /** Local time the record was first seen with this content. */
  readonly observedAt: number;
}

/** The record's identity for change detection; metadata (labels, annotations) does not count. */
export function recordKey(spec: LeaseSpec | undefined): string {
  return JSON.stringify([
    spec?.holderIdentity ?? '',
    spec?.leaseDurationSeconds ?? 0,
    spec?.acquireTime ?? '',
    spec?.renewTime ?? '',
    spec?.leaseTransitions ?? 0,
  ]);
}

/** Folds a freshly read Lease into what was known of it: unchanged content keeps its first sighting. */
export function observe(previous: Observation | undefined, spec: LeaseSpec | undefined, now: number): Observation {
  const record = recordKey(spec);
  return previous && previous.record === record ? previous : { record, observedAt: now };
}

export type Verdict =
  | { readonly free: true; readonly why: 'released' | 'expired' | 'mine' }
  | { readonly free: false; readonly holder: string; readonly until: number };

/**
 * Whether `me` may take the Lease now. Free when nobody holds it (released: empty holder), when
 * the holder's published duration has passed since we observed its last change, or when the
 * record names us (a lease this process lost, taken back as a new acquisition).
 */
export function judge(spec: LeaseSpec | undefined, observation: Observation, me: string, now: number): Verdict {
  const holder = spec?.holderIdentity ?? '';
  if (holder === '') return { free: true, why: 'released' };
  if (holder === me) return { free: true, why: 'mine' };
  // A record without a duration cannot be judged live; client-go treats it as expired too.
  const until = observation.observedAt + Math.max(0, spec?.leaseDurationSeconds ?? 0) * 1000;
  return now >= until ? { free: true, why: 'expired' } : { free: false, holder, until };
}

/** Whole seconds, rounded up: the published duration must never be shorter than the ttl we keep. */
export const leaseSeconds = (ttlMs: number) => Math.max(1, Math.ceil(ttlMs / 1000));

/**
 * The record of a new acquisition. leaseTransitions is bumped on every acquisition (client-go bumps
 * it only when the holder changes; a larger count is what client-go expects to see anyway). It is
 * not the fencing token: that is an annotation (core's nextFencingToken), since a recreated Lease starts
 * the count again at 0.
 */
export function acquiredSpec(previous: LeaseSpec | undefined, me: string, ttlMs: number, now: number): LeaseSpec {
  const at = microTime(now);
  return {
    holderIdentity: me,
    leaseDurationSeconds: leaseSeconds(ttlMs),
    acquireTime: at,
    renewTime: at,
    leaseTransitions: previous ? (previous.leaseTransitions ?? 0) + 1 : 0,
  };
}

export function renewedSpec(current: LeaseSpec, ttlMs: number, now: number): LeaseSpec {
  return { ...current, leaseDurationSeconds: leaseSeconds(ttlMs), renewTime: microTime(now) };
}

/**
 * Release as client-go does it: no holder and a 1 s duration, so a contender that still sees the
 * old content waits at most a second; leaseTransitions (and the token annotation) are kept.
 */
export function releasedSpec(current: LeaseSpec, now: number): LeaseSpec {
  const at = microTime(now);
  return {
    ...current,
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: at,
    renewTime: at,
    leaseTransitions: current.leaseTransitions ?? 0,
  };
}

/** Names a Lease may have: a DNS subdomain (RFC 1123), as Kubernetes validates object names. */
export const leaseNamePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Where a Lease lock keeps its fencing token (core's nextFencingToken): an annotation, written by the
 * same resourceVersion-checked update that takes the Lease. client-go electors update the object they
 * read, annotations included, so the count goes on across them. leaseTransitions is not the token: a
 * Lease deleted and created again starts it over at 0.
 */
export const fencingTokenAnnotation = 'muster.io/fencing-token';
