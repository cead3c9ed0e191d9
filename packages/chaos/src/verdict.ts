import { checkHeartbeats } from './heartbeat-checks.js';
import type { Bounds, FaultEvent, HistoryEvent, LockEvent } from './history.js';
import { checkLiveness, checkLock } from './lock-checks.js';

export type ViolationKind =
  | 'interleaved'
  | 'token-not-increasing'
  | 'refused-current-holder'
  | 'expired-on-acquire'
  | 'wrote-after-expiry'
  | 'two-holders'
  | 'liveness-gap'
  | 'stale-missed'
  | 'alive-missed'
  | 'incarnation-regressed';

export const violationKinds: readonly ViolationKind[] = [
  'interleaved',
  'token-not-increasing',
  'refused-current-holder',
  'expired-on-acquire',
  'wrote-after-expiry',
  'two-holders',
  'liveness-gap',
  'stale-missed',
  'alive-missed',
  'incarnation-regressed',
];

export interface Violation {
  readonly kind: ViolationKind;
  readonly at: number;
  readonly who?: string;
  readonly detail: string;
}

export interface Spread {
  readonly count: number;
  readonly min: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface Verdict {
  readonly violations: readonly Violation[];
  readonly acquisitions: number;
  readonly writes: { readonly accepted: number; readonly refused: number };
  readonly faults: Readonly<Record<string, number>>;
  /** From SIGKILL of the holder to the next acquisition by anyone. */
  readonly failover: Spread | undefined;
  /** From acquire() called to returned. */
  readonly acquireWait: Spread | undefined;
}

function spread(values: number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { count: sorted.length, min: sorted[0]!, p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! };
}

/** Judges a whole history: every check, plus the figures the report prints. */
export function judge(history: readonly HistoryEvent[], bounds: Bounds, start: number, end: number): Verdict {
  const violations = [...checkLock(history), ...checkLiveness(history, bounds, start, end), ...checkHeartbeats(history, bounds)].sort(
    (a, b) => a.at - b.at,
  );
  const lock = history.filter((e): e is LockEvent => e.kind !== 'fault' && e.kind !== 'hb-sample').sort((a, b) => a.at - b.at);
  const faultEvents = history.filter((e): e is FaultEvent => e.kind === 'fault');
  const faults: Record<string, number> = {};
  for (const f of faultEvents) faults[f.fault] = (faults[f.fault] ?? 0) + 1;

  const acquiredAt = lock.filter((e) => e.kind === 'acquired').map((e) => e.at);
  const failovers: number[] = [];
  for (const f of faultEvents) {
    if (f.fault !== 'kill-holder') continue;
    // The orchestrator picks the holder from reports in flight: a victim that had just released
    // (or lost) was no holder, and its "failover" would measure nothing.
    const last = lock.findLast(
      (e) => e.who === f.target && e.at <= f.at && (e.kind === 'acquired' || e.kind === 'released' || e.kind === 'lost'),
    );
    const releasedAsItDied = lock.some((e) => e.who === f.target && e.at > f.at && (e.kind === 'released' || e.kind === 'lost'));
    // A holder whose last write was refused was already giving the lock up.
    const lastWrite = lock.findLast((e) => e.kind === 'write' && e.who === f.target && e.at <= f.at);
    const fencedOff = lastWrite?.kind === 'write' && !lastWrite.accepted;
    if (last?.kind !== 'acquired' || releasedAsItDied || fencedOff) continue;
    const next = acquiredAt.find((at) => at > f.at);
    if (next !== undefined) failovers.push(next - f.at);
  }
  const waits: number[] = [];
  const waitingSince = new Map<string, number>();
  for (const e of lock) {
    if (e.kind === 'acquiring') waitingSince.set(e.who, e.at);
    if (e.kind === 'acquired') {
      const since = waitingSince.get(e.who);
      if (since !== undefined) waits.push(e.at - since);
      waitingSince.delete(e.who);
    }
  }
  const writes = lock.filter((e) => e.kind === 'write');
  return {
    violations,
    acquisitions: acquiredAt.length,
    writes: { accepted: writes.filter((w) => w.accepted).length, refused: writes.filter((w) => !w.accepted).length },
    faults,
    failover: spread(failovers),
    acquireWait: spread(waits),
  };
}

const ms = (v: number) => `${Math.round(v)} ms`;

/** The table a run prints. */
export function formatVerdict(verdict: Verdict, bounds: Bounds, header: string): string {
  const rows: [string, string][] = [];
  rows.push(['acquisitions', String(verdict.acquisitions)]);
  rows.push(['writes accepted / refused', `${verdict.writes.accepted} / ${verdict.writes.refused}`]);
  for (const [fault, n] of Object.entries(verdict.faults).sort()) rows.push([`fault ${fault}`, String(n)]);
  const f = verdict.failover;
  rows.push([
    'failover after SIGKILL min/p50/p99',
    f
      ? `${ms(f.min)} / ${ms(f.p50)} / ${ms(f.p99)}  (${(f.min / bounds.ttl).toFixed(2)} / ${(f.p50 / bounds.ttl).toFixed(2)} / ${(f.p99 / bounds.ttl).toFixed(2)} × ttl ${bounds.ttl} ms, n=${f.count})`
      : 'no holder was killed',
  ]);
  const w = verdict.acquireWait;
  rows.push(['acquire wait p50/p99', w ? `${ms(w.p50)} / ${ms(w.p99)} (n=${w.count})` : '-']);
  rows.push(['liveness bound', ms(bounds.livenessBound)]);
  for (const kind of violationKinds) {
    rows.push([`violations ${kind}`, String(verdict.violations.filter((v) => v.kind === kind).length)]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = [header, ...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)];
  const shown = verdict.violations.slice(0, 20);
  if (shown.length > 0) {
    lines.push('  first violations:');
    for (const v of shown) lines.push(`    ${v.kind} ${v.who ?? ''}: ${v.detail}`);
  }
  return lines.join('\n');
}
