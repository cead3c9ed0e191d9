import type { Muster } from '@muster/core';
import { s, type Infer } from '@muster/core/adapter';

const cqlName = { minLength: 1, pattern: /^[a-z][a-z0-9_]{0,47}$/, hint: 'a lower-case CQL name (letters, digits, _)' };

/** Where the Cassandra task table is and how leader writes reach it. */
export const cassandraTableSchema = s.object({
  /** host:port of Cassandra nodes or of Muster CQL proxies (the driver learns the rest from system.peers). */
  contactPoints: s.array(s.string({ minLength: 1 }), { minItems: 1 }),
  localDataCenter: s.string({ minLength: 1 }),
  keyspace: s.withDefault(s.string(cqlName), 'scheduler'),
  table: s.withDefault(s.string(cqlName), 'tasks'),
  username: s.optional(s.string({ minLength: 1 })),
  password: s.optional(s.secret(s.string())),
  /**
   * `false` writes leader writes as plain batches with no fence: only to show what the fence
   * prevents (the failover test's control). Never for real work.
   */
  fence: s.withDefault(s.boolean(), true),
});

/** The `scheduler:` section an application adds beside the ports in its muster YAML. */
export const schedulerSchema = s.object({
  /** URL of the task table's writer (`muster-scheduler table`); the in-process demo needs none. */
  table: s.optional(s.string({ minLength: 1, pattern: /^https?:\/\//, hint: 'an http:// URL' })),
  /** The task table in Cassandra instead (directly, or through Muster CQL proxies); excludes `table`. */
  cassandra: s.optional(cassandraTableSchema),
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
  const settings = muster.config.parse(['scheduler'], schedulerSchema);
  if (settings.cassandra && settings.table)
    throw muster.config.error(['scheduler', 'cassandra'], 'names a task table, and so does scheduler.table: keep one of them');
  return settings;
}
