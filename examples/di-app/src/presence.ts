import type { HeartbeatStore, JsonValue } from '@muster/core';

/** This instance's heartbeat, and its departure when the application stops. */
export class Presence {
  constructor(
    readonly heartbeat: HeartbeatStore,
    private readonly memberId: string,
  ) {}

  beat(payload: JsonValue): Promise<void> {
    return this.heartbeat.beat(this.memberId, payload, { group: 'di-app' });
  }

  /** Leaves at once instead of waiting out the ttl (peers see `left`, not `stale`). */
  leave(): Promise<void> {
    return this.heartbeat.remove(this.memberId);
  }
}
