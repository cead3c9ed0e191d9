#!/usr/bin/env node
// muster-scheduler table | master | worker — each a process of its own, configured by a muster YAML.
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { createMuster, type Muster } from '@muster/core';
import { connectCassandra } from './cassandra-connect.js';
import { schedulerSettings, type SchedulerSettings } from './config.js';
import { HttpTaskStore } from './http-store.js';
import { LocalTaskStore } from './local-store.js';
import { jsonLines, type SchedulerLog } from './log.js';
import { Master } from './master.js';
import { pauseBeforeLeaderWrite } from './pause-hook.js';
import type { TaskStore } from './task.js';
import { TableServer } from './table-server.js';
import { Worker } from './worker.js';

const usage = `usage:
  muster-scheduler table  [--file tasks.json] [--port 0]        the task table's single writer (loopback HTTP)
  muster-scheduler schema --config muster.yaml                  creates the Cassandra task table (scheduler.cassandra), once
  muster-scheduler master --config muster.yaml [--id master-0]
  muster-scheduler worker --config muster.yaml [--id worker-0]
The YAML holds the ports (discovery, lock, heartbeat) and a scheduler: section (table: http://… or cassandra: {…}, ttls, intervals).`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { config: { type: 'string' }, id: { type: 'string' }, file: { type: 'string' }, port: { type: 'string' } },
});
const role = positionals[0];

function onSignal(stop: () => Promise<void>): void {
  const handler = () => {
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}

async function withMuster(start: (muster: Muster, id: string) => Promise<{ close(): Promise<void> }>): Promise<void> {
  if (!values.config) throw new Error(`--config is required\n${usage}`);
  const muster = await createMuster(values.config);
  const id = values.id ?? `${role}-${hostname()}-${process.pid}`;
  const part = await start(muster, id);
  onSignal(async () => {
    await part.close();
    await muster.close();
  });
}

async function main(): Promise<void> {
  if (role === 'table') {
    const server = await TableServer.listen(await LocalTaskStore.open(values.file ? { file: values.file } : {}), {
      port: Number(values.port ?? 0),
    });
    jsonLines('table')('table-listening', { url: server.url, file: values.file });
    onSignal(() => server.close());
  } else if (role === 'master' || role === 'worker') {
    await withMuster(async (muster, id) => {
      if (muster.adapters.lock === 'static' || muster.adapters.heartbeat === 'static') {
        // In-process tables: every process would have its own lock (each master leading, with
        // tokens that collide) and its own heartbeats. Refuse rather than run a split brain.
        throw muster.config.error(
          [muster.adapters.lock === 'static' ? 'lock' : 'heartbeat', 'adapter'],
          'the static adapter is in-process only; separate scheduler processes need kubernetes or consul (or run the one-process demo: node dist/demo.js)',
        );
      }
      const settings = schedulerSettings(muster);
      const log = jsonLines(id);
      const { store, close } = await openStore(muster, settings, id, log);
      const part = await startPart(muster, settings, store, id, log);
      return {
        close: async () => {
          await part.close();
          await close();
        },
      };
    });
  } else if (role === 'schema') {
    if (!values.config) throw new Error(`--config is required\n${usage}`);
    const muster = await createMuster(values.config);
    try {
      const settings = schedulerSettings(muster);
      if (!settings.cassandra)
        throw muster.config.error(['scheduler'], 'has no cassandra: section; `schema` creates the Cassandra task table');
      const connection = await connectCassandra(settings.cassandra, settings.lockName);
      try {
        await connection.createSchema();
      } finally {
        await connection.close();
      }
      jsonLines('schema')('schema-created', { keyspace: settings.cassandra.keyspace, table: settings.cassandra.table });
    } finally {
      await muster.close();
    }
  } else {
    console.error(usage);
    process.exitCode = 2;
  }
}

/** The task table the config names: the table server over HTTP, or Cassandra. */
async function openStore(
  muster: Muster,
  settings: SchedulerSettings,
  id: string,
  log: SchedulerLog,
): Promise<{ store: TaskStore; close(): Promise<void> }> {
  if (settings.cassandra) {
    const pauseDir = process.env.SCHEDULER_TEST_PAUSE_DIR;
    const connection = await connectCassandra(settings.cassandra, settings.lockName, {
      beforeLeaderWrite: pauseDir ? pauseBeforeLeaderWrite(pauseDir, id, log) : undefined,
    });
    log('store', { cassandra: settings.cassandra.contactPoints, fence: settings.cassandra.fence });
    return connection;
  }
  if (!settings.table)
    throw muster.config.error(
      ['scheduler', 'table'],
      'is required for a separate process: the URL of `muster-scheduler table` (or a cassandra: section)',
    );
  return { store: new HttpTaskStore(settings.table), close: async () => undefined };
}

async function startPart(
  muster: Muster,
  settings: SchedulerSettings,
  store: TaskStore,
  id: string,
  log: SchedulerLog,
): Promise<{ close(): Promise<void> }> {
  if (role === 'master') {
    const master = new Master({
      id,
      lock: muster.lock,
      heartbeat: muster.heartbeat,
      store,
      lockName: settings.lockName,
      workerGroup: settings.workerGroup,
      leaseTtl: settings.leaseTtl,
      assignInterval: settings.assignInterval,
      log,
    });
    master.start();
    log('master-started', { adapters: muster.adapters });
    return master;
  }
  const worker = new Worker({
    id,
    version: settings.version,
    store,
    heartbeat: muster.heartbeat,
    discovery: muster.has('discovery') ? muster.discovery : undefined,
    service: settings.service,
    group: settings.workerGroup,
    heartbeatTtl: settings.heartbeatTtl,
    beatInterval: settings.beatInterval,
    pollInterval: settings.pollInterval,
    capacity: settings.capacity,
    log,
  });
  await worker.start();
  return worker;
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
