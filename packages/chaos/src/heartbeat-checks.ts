import type { Bounds, FaultEvent, HeartbeatSample, HistoryEvent } from './history.js';
import type { Violation } from './verdict.js';

/** Faults on one contender's network: its member may rightly look dead meanwhile. */
const networkFaults = new Set(['drop', 'latency', 'black-hole']);

/**
 * Whether a fault excuses member `s` not shown alive. A fault on the backend or every contender
 * (a restart, a paused host) may have cut the observer off too, so it excuses the whole run of
 * the process it overlapped, except the server-wide faults that must be recovered from within a
 * bound (below). A fault on the member's own network leaves the observer alone: once
 * it ends, the member has ttl + grace to be seen again (a beat stuck in a broken connection
 * for longer than that is a violation).
 */
const excuses = (f: FaultEvent, s: HeartbeatSample, since: number, bounds: Bounds) => {
  if (f.at > s.at) return false;
  if (f.target === undefined) return recovered(f) ? f.end + recovery(bounds) >= s.at : f.end + patienceOf(bounds) >= since;
  // The observer cut off: every member may look dead meanwhile (alive is judged from the last change
  // it saw), and must look alive again within the recovery bound once it hears the server again.
  if (f.target === 'observer') return f.end + recovery(bounds) >= s.at;
  return networkFaults.has(f.fault) && f.target.startsWith(`${s.member}.`) && f.end + patienceOf(bounds) >= s.at;
};

/**
 * Server-wide faults after which every client, the observer too, must see the truth again within a
 * bound: a paused server resumed, or one that answered errors (the observer never saw those); and
 * a black hole in front of the observer, once it closes. A
 * member's next beat lands within ttl + grace, and a watch that stayed silent through the fault is
 * opened again after at most twice the longest ttl (5 s at least; the stores' documented bound).
 * (Excusing the whole run of every process the fault overlapped hid a beat stuck after it.)
 */
const recovered = (f: FaultEvent) => f.fault === 'server-pause' || f.fault === 'server-errors';
const patienceOf = (bounds: Bounds) => bounds.heartbeatTtl + bounds.heartbeatGrace;
const recovery = (bounds: Bounds) => patienceOf(bounds) + Math.max(5000, 2 * bounds.heartbeatTtl);

/**
 * The heartbeat store's promises, judged on samples of an observer's view:
 * - `stale-missed`: a member with no running process for longer than ttl + grace still shown alive
 *   (a black hole in front of the observer excuses nothing here: it must judge on its own clock);
 * - `alive-missed`: a member whose newest process has run (and beaten) for ttl + grace not shown
 *   alive with that process's generation (e.g. a restart refused as an "older" incarnation);
 * - `incarnation-regressed`: the observer showed an older generation after a newer one.
 */
export function checkHeartbeats(history: readonly HistoryEvent[], bounds: Bounds): Violation[] {
  const samples = history.filter((e): e is HeartbeatSample => e.kind === 'hb-sample').sort((a, b) => a.at - b.at);
  const faults = history.filter((e): e is FaultEvent => e.kind === 'fault');
  const patience = bounds.heartbeatTtl + bounds.heartbeatGrace;
  const violations: Violation[] = [];
  const reported = new Set<string>();
  const newestSeen = new Map<string, number>();
  const once = (key: string, v: Violation) => {
    if (reported.has(key)) return;
    reported.add(key);
    violations.push(v);
  };
  for (const s of samples) {
    const seen = newestSeen.get(s.member);
    if (s.observedGeneration !== undefined) {
      if (seen !== undefined && s.observedGeneration < seen) {
        once(`${s.member}:regressed:${s.observedGeneration}`, {
          kind: 'incarnation-regressed',
          at: s.at,
          who: s.member,
          detail: `observer showed generation ${s.observedGeneration} after generation ${seen}`,
        });
      }
      newestSeen.set(s.member, Math.max(seen ?? 0, s.observedGeneration));
    }
    const downSince = s.downSince;
    // A fault on every contender at once (a paused in-process host) pauses the observer too.
    const observerPaused = faults.some(
      (f) =>
        f.target === undefined &&
        f.at <= s.at &&
        (recovered(f) ? f.end + recovery(bounds) >= s.at : f.end + patience >= (downSince ?? s.at)),
    );
    if (downSince !== undefined && s.observedAlive && s.at - downSince > patience && !observerPaused) {
      once(`${s.member}:stale:${downSince}`, {
        kind: 'stale-missed',
        at: s.at,
        who: s.member,
        detail: `shown alive ${Math.round(s.at - downSince)} ms after its last process stopped (ttl ${bounds.heartbeatTtl} ms)`,
      });
    }
    if (s.runningSince !== undefined && s.at - s.runningSince > patience) {
      const current = s.observedAlive && s.observedGeneration === s.runningGeneration;
      const since = s.runningSince;
      const excused = faults.some((f) => excuses(f, s, since, bounds));
      if (!current && !excused) {
        once(`${s.member}:alive:${since}`, {
          kind: 'alive-missed',
          at: s.at,
          who: s.member,
          detail: `generation ${s.runningGeneration} has run for ${Math.round(s.at - since)} ms but the observer shows ${
            s.observedAlive ? `generation ${s.observedGeneration} alive` : 'it not alive'
          }`,
        });
      }
    }
  }
  return violations;
}
