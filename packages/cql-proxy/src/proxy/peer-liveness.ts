import type { Endpoint, JsonValue, MemberHeartbeat } from '@muster/core';
import type { PeerState } from './peer-probe.js';

/** What is known of one peer beyond Discovery's entry. */
export interface PeerEvidence {
  /** The probe's last answer, when peers are probed. */
  readonly probe?: PeerState | undefined;
  /** Its heartbeat, when a HeartbeatStore is used and it has one. */
  readonly heartbeat?: MemberHeartbeat | undefined;
}

const isDrainingPayload = (payload: JsonValue): boolean =>
  typeof payload === 'object' && payload !== null && !Array.isArray(payload) && payload['draining'] === true;

/**
 * Shapes the endpoints the membership tracker sees with what the proxy learns beyond Discovery.
 *
 * A peer the probe cannot reach is not ready (clients get STATUS_CHANGE DOWN; it stays in
 * system.peers). A peer that says it is draining — its probe answer, or `draining: true` in its
 * heartbeat — is *leaving*: first shown not ready (DOWN), then, `removeAfter` ms later, left out
 * of the member list (REMOVED_NODE). The removal is what moves default drivers away without a
 * lost request: the Node.js and Python drivers ignore DOWN for a host they hold connections to,
 * but drop a removed host's pool, the Node.js and Java drivers only once its requests are
 * answered. A leaving peer stays out until it is seen serving again (probe `up`, or a heartbeat
 * that no longer says draining), so a drained peer that then stops does not come back as DOWN.
 */
export class PeerLiveness {
  readonly #removeAfter: number;
  readonly #leavingSince = new Map<string, number>();

  constructor(options: { removeAfter: number }) {
    this.#removeAfter = options.removeAfter;
  }

  /**
   * The endpoints to derive membership from at `now`, and when (local ms) the result changes
   * without new input (a leaving peer's removal is due), if it does.
   */
  apply(
    endpoints: readonly Endpoint[],
    selfId: string,
    evidence: (id: string) => PeerEvidence,
    now: number,
  ): { endpoints: Endpoint[]; changesAt?: number } {
    const out: Endpoint[] = [];
    let changesAt: number | undefined;
    const listed = new Set(endpoints.map((e) => e.id));
    for (const id of [...this.#leavingSince.keys()]) if (!listed.has(id)) this.#leavingSince.delete(id);
    for (const endpoint of endpoints) {
      if (endpoint.id === selfId) {
        out.push(endpoint);
        continue;
      }
      const { probe, heartbeat } = evidence(endpoint.id);
      const draining = probe === 'draining' || (heartbeat !== undefined && isDrainingPayload(heartbeat.payload));
      const serving = probe !== undefined ? probe === 'up' : heartbeat !== undefined && heartbeat.alive;
      if (draining && !this.#leavingSince.has(endpoint.id)) this.#leavingSince.set(endpoint.id, now);
      else if (!draining && serving) this.#leavingSince.delete(endpoint.id);
      const since = this.#leavingSince.get(endpoint.id);
      if (since !== undefined) {
        const removal = since + this.#removeAfter;
        if (now >= removal) continue;
        changesAt = Math.min(changesAt ?? Infinity, removal);
        out.push({ ...endpoint, ready: false });
        continue;
      }
      out.push(probe === undefined || probe === 'up' ? endpoint : { ...endpoint, ready: false });
    }
    return changesAt === undefined ? { endpoints: out } : { endpoints: out, changesAt };
  }
}
