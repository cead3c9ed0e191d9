import type { Bounds, FaultEvent, HistoryEvent, LockEvent } from './history.js';
import type { Violation } from './verdict.js';

type Acquired = Extract<LockEvent, { kind: 'acquired' }>;
type Write = Extract<LockEvent, { kind: 'write' }>;

/** Faults after which the port promises nothing about a single holder (its docs say so); fencing must still hold. */
const holderExcuses = new Set(['pause-holder', 'zombie', 'clock-step']);
/** Faults that hit the backend (or every contender at once): they excuse a second holder and a gap without one. */
const backendWide = (f: FaultEvent) =>
  f.target === undefined &&
  (f.fault === 'backend-restart' ||
    f.fault === 'delete-lock' ||
    f.fault === 'invalidate-holder' ||
    f.fault === 'drop' ||
    f.fault === 'pause-holder');
/**
 * A server that hangs (SIGSTOP) or answers only errors keeps everyone from the lock, so a gap
 * without a holder is no violation; it excuses no second holder, though: each holder gives up by
 * its own clock whatever the server does, and a late answer must not make an old holder act.
 */
const outage = (f: FaultEvent) => backendWide(f) || (f.target === undefined && (f.fault === 'server-pause' || f.fault === 'server-errors'));

/**
 * A clock that jumps forward passes expiresAt at once (even in the middle of an acquire); no timer
 * can beat that, so expiry judged on that clock is excused while the step is in force.
 */
const clockStepped = (faults: readonly FaultEvent[], who: string, at: number) =>
  faults.some((f) => f.fault === 'clock-step' && (f.target === undefined || f.target === who) && f.at <= at && at <= f.end);

const lockEvents = (history: readonly HistoryEvent[]) =>
  history.filter((e): e is LockEvent => e.kind !== 'fault' && e.kind !== 'hb-sample').sort((a, b) => a.at - b.at);

/**
 * The lock's promises, judged on a history:
 * - `interleaved`: an accepted write from a tenure after a later tenure's accepted write;
 * - `token-not-increasing`: an acquisition whose token is below the highest granted, or equal to
 *   the previous one while another contender took it;
 * - `refused-current-holder`: the fenced resource refused the newest holder (its token went backwards);
 * - `expired-on-acquire`: acquire() returned a lease whose expiresAt had passed;
 * - `wrote-after-expiry`: a holder wrote (with onLost not fired) after its own expiresAt;
 * - `two-holders`: a holder wrote after another contender acquired, with no fault that the port
 *   docs exclude (pause, clock step, data loss, deletion) to excuse it.
 */
export function checkLock(history: readonly HistoryEvent[]): Violation[] {
  const events = lockEvents(history);
  const faults = history.filter((e): e is FaultEvent => e.kind === 'fault');
  const violations: Violation[] = [];

  // Interleaving, in the order the resource judged the writes.
  const accepted = events.filter((e): e is Write => e.kind === 'write' && e.accepted).sort((a, b) => a.seq - b.seq);
  const closed = new Set<string>();
  let current: string | undefined;
  for (const w of accepted) {
    const tenure = `${w.who}#${w.token}`;
    if (tenure === current) continue;
    if (closed.has(tenure)) {
      violations.push({
        kind: 'interleaved',
        at: w.at,
        who: w.who,
        detail: `accepted write with token ${w.token} after ${current} had written`,
      });
    }
    if (current) closed.add(current);
    current = tenure;
  }

  // Tokens per handover.
  let highest: bigint | undefined;
  let previous: Acquired | undefined;
  for (const e of events) {
    if (e.kind !== 'acquired') continue;
    const token = BigInt(e.token);
    if (e.remainingMs <= 0 && !clockStepped(faults, e.who, e.at)) {
      violations.push({
        kind: 'expired-on-acquire',
        at: e.at,
        who: e.who,
        detail: `acquire() returned ${-e.remainingMs} ms after expiresAt`,
      });
    }
    if (highest !== undefined && previous) {
      if (token < highest) {
        violations.push({ kind: 'token-not-increasing', at: e.at, who: e.who, detail: `token ${token} after ${highest} was granted` });
      } else if (token === BigInt(previous.token) && previous.who !== e.who) {
        violations.push({
          kind: 'token-not-increasing',
          at: e.at,
          who: e.who,
          detail: `token ${token} again, after ${previous.who} held it`,
        });
      }
    }
    highest = highest === undefined || token > highest ? token : highest;
    previous = e;
  }

  // Per write: was the writer the newest holder, had its lease expired, had someone else taken over?
  const acquisitions = events.filter((e): e is Acquired => e.kind === 'acquired');
  const reported = new Set<string>();
  for (const w of events) {
    if (w.kind !== 'write') continue;
    if (w.holderNow >= w.expiresAt && !clockStepped(faults, w.who, w.at)) {
      violations.push({
        kind: 'wrote-after-expiry',
        at: w.at,
        who: w.who,
        detail: `wrote ${Math.round(w.holderNow - w.expiresAt)} ms after its lease's expiresAt, onLost not fired`,
      });
    }
    const mine = acquisitions.findLast((a) => a.who === w.who && a.token === w.token && a.at <= w.at);
    const newest = acquisitions.findLast((a) => a.at <= w.at);
    if (!w.accepted && newest && newest === mine) {
      violations.push({
        kind: 'refused-current-holder',
        at: w.at,
        who: w.who,
        detail: `the newest holder's write with token ${w.token} was refused`,
      });
    }
    if (!mine) continue;
    const rival = acquisitions.find((a) => a.who !== w.who && a.at > mine.at && a.at < w.at);
    if (!rival) continue;
    const key = `${w.who}#${w.token}/${rival.who}#${rival.token}`;
    if (reported.has(key)) continue;
    const excused = faults.some(
      (f) =>
        f.at <= w.at &&
        f.end >= mine.at &&
        (backendWide(f) || (holderExcuses.has(f.fault) && (f.target === undefined || f.target === w.who || f.target === rival.who))),
    );
    if (excused) continue;
    reported.add(key);
    violations.push({
      kind: 'two-holders',
      at: w.at,
      who: w.who,
      detail: `wrote with token ${w.token} ${Math.round(w.at - rival.at)} ms after ${rival.who} acquired token ${rival.token}, no fault excuses it`,
    });
  }
  return violations;
}

/** Time ranges during which some contender held the lock (and was not paused). */
function holding(history: readonly HistoryEvent[], end: number): [number, number][] {
  const events = lockEvents(history);
  const pauses = history.filter((e): e is FaultEvent => e.kind === 'fault' && (e.fault === 'pause-holder' || e.fault === 'zombie'));
  const ranges: [number, number][] = [];
  for (const a of events) {
    if (a.kind !== 'acquired') continue;
    const stop = events.find(
      (e) =>
        e.who === a.who && e.at >= a.at && (e.kind === 'exited' || ((e.kind === 'lost' || e.kind === 'released') && e.token === a.token)),
    );
    const paused = pauses.find((p) => (p.target === a.who || p.target === undefined) && p.at >= a.at);
    ranges.push([a.at, Math.min(stop?.at ?? end, paused?.at ?? end)]);
  }
  return ranges.sort((x, y) => x[0] - y[0]);
}

/** Gaps longer than the bound without a holder, outside backend-wide faults (and the bound after them). */
export function checkLiveness(history: readonly HistoryEvent[], bounds: Bounds, start: number, end: number): Violation[] {
  const faults = history.filter((e): e is FaultEvent => e.kind === 'fault' && outage(e));
  const violations: Violation[] = [];
  const ranges = holding(history, end);
  if (ranges.length === 0) {
    return [{ kind: 'liveness-gap', at: start, detail: `nobody acquired the lock in ${Math.round(end - start)} ms` }];
  }
  let coveredUntil = start;
  const gaps: [number, number][] = [];
  for (const [from, to] of ranges) {
    if (from > coveredUntil) gaps.push([coveredUntil, from]);
    coveredUntil = Math.max(coveredUntil, to);
  }
  if (end > coveredUntil) gaps.push([coveredUntil, end]);
  for (const [from, to] of gaps) {
    if (to - from <= bounds.livenessBound) continue;
    if (faults.some((f) => f.at <= to && f.end + bounds.livenessBound >= from)) continue;
    violations.push({
      kind: 'liveness-gap',
      at: from,
      detail: `no holder for ${Math.round(to - from)} ms (bound ${bounds.livenessBound} ms) while contenders ran`,
    });
  }
  return violations;
}
