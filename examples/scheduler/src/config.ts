import type { Muster } from '@muster/core';
import { s, type Infer } from '@muster/core/adapter';

/** The `scheduler:` section an application adds beside the ports in its muster YAML. */
export const schedulerSchema = s.object({
  /** URL of the task table's writer (`muster-scheduler table`); the in-process demo needs none. */
  table: s.optional(s.string({ minLength: 1, pattern: /^https?:\/\//, hint: 'an http:// URL' })),
  lockName: s.withDefault(s.string({ minLength: 1 }), 'scheduler-master'),
  workerGroup: s.withDefault(s.string({ minLength: 1 }), 'scheduler-workers'),
  /** The service workers register under in Discovery. */
  service: s.withDefault(s.string({ minLength: 1 }), 'scheduler-worker'),
  /** Lease ttl of the master lock; the lock adapter's default when omitted. */
  leaseTtl: s.optional(s.duration({ min: 1 })),
  heartbeatTtl: s.withDefault(s.duration({ min: 1 }), 3000),
  beatInterval: s.withDefault(s.duration({ min: 1 }), 500),
  pollInterval: s.withDefault(s.duration({ min: 1 }), 200),
  assignInterval: s.withDefault(s.duration({ min: 1 }), 300),
  capacity: s.withDefault(s.integer({ min: 1 }), 2),
  version: s.withDefault(s.string({ minLength: 1 }), '1.0.0'),
});

export type SchedulerSettings = Infer<typeof schedulerSchema>;

/** Validates the `scheduler:` section; errors name file:line:col like Muster's own. */
export function schedulerSettings(muster: Muster): SchedulerSettings {
  return muster.config.parse(['scheduler'], schedulerSchema);
}
