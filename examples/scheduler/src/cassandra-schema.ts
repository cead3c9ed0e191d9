import type cassandra from 'cassandra-driver';

/** Where the task table lives in Cassandra. */
export interface CassandraTableName {
  readonly keyspace: string;
  readonly table: string;
}

/**
 * One partition per scheduler (the master lock's name), so that the fence — a static column in
 * that partition, compared by a lightweight transaction — orders every master write against every
 * other write to the scheduler's state. Rows are told apart by `kind`:
 *
 * - `task`: one per task (clustered by task id). `status`, `worker` and `attempt` are what the
 *   leader writes; `completed_attempt` is written only by the worker whose run counted, and the
 *   leader never writes it, so a leader that planned from a read taken just before a task finished
 *   cannot undo the completion by reassigning it. The run maps (keyed by attempt) are the worker's
 *   run records, stamped by Cassandra's clock in the same conditional update that starts or ends the
 *   run.
 * - `write`: one per accepted leader write (token, leader, op), written in the same fenced batch,
 *   so the order of accepted writes is Paxos's (their write time comes from the ballot). They
 *   expire after a day: an audit trail, not state.
 * - `leader`: the last leader that wrote and its token (the seal).
 */
export function taskTableDdl({ keyspace, table }: CassandraTableName): string {
  return `CREATE TABLE IF NOT EXISTS ${keyspace}.${table} (
    scheduler text,
    kind text,
    id text,
    duration_ms int,
    status text,
    worker text,
    attempt int,
    completed_attempt int,
    run_worker map<int, text>,
    run_started map<int, bigint>,
    run_ended map<int, bigint>,
    run_outcome map<int, text>,
    fencing_token bigint,
    leader text,
    op text,
    PRIMARY KEY ((scheduler), kind, id)
  )`;
}

/** Creates the keyspace (when missing, with SimpleStrategy) and the task table. Run once, not by every process. */
export async function createTaskTable(
  client: cassandra.Client,
  name: CassandraTableName,
  options: { replicationFactor?: number } = {},
): Promise<void> {
  await client.execute(
    `CREATE KEYSPACE IF NOT EXISTS ${name.keyspace} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': ${options.replicationFactor ?? 1}}`,
  );
  await client.execute(taskTableDdl(name));
}
