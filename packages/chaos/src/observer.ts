import { createMuster, type MemberHeartbeat } from '@muster/core';
import type { ObservedMember, ObserverSpec } from './protocol.js';

const generationOf = (m: MemberHeartbeat): number | undefined => {
  const payload = m.payload as { generation?: unknown } | null;
  return typeof payload?.generation === 'number' ? payload.generation : undefined;
};

/**
 * Watches every member's heartbeat through the public API and reports each view it is shown; the
 * orchestrator compares it with what it knows (which process runs, which is paused or dead).
 */
export async function observe(spec: ObserverSpec, report: (members: ObservedMember[]) => void, signal: AbortSignal): Promise<void> {
  const muster = await createMuster(spec.config);
  try {
    for await (const event of muster.heartbeat.watch(spec.group, { signal })) {
      report(event.members.map((m) => ({ member: m.memberId, alive: m.alive, generation: generationOf(m) })));
    }
  } finally {
    await muster.close().catch(() => undefined);
  }
}
