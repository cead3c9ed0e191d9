#!/usr/bin/env node
// muster-chaos <static|kubernetes|consul|consul-persist|./adapter.js> [--minutes N] [--seed S] ...: runs the
// fault-injection history checker and prints its table; exit code 1 when it found violations.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { InvalidArgumentError, MusterError } from '@muster/core';
import { profileFor } from './backends/select.js';
import { cassandraResource } from './cassandra-resource.js';
import type { FencedResourcePort } from './fenced-resource.js';
import type { FaultKind } from './history.js';
import { runChaos } from './orchestrator.js';
import { newSeed } from './random.js';

const usage = `usage: muster-chaos <static|kubernetes|consul|consul-persist|./adapter.js> [options]
  --minutes N       how long to run (default 1; --seconds for short runs)
  --seed S          replay the fault schedule of an earlier run (printed by every run; env MUSTER_CHAOS_SEED)
  --contenders N    contender processes (default 5)
  --ttl MS          lease and heartbeat ttl (default: 1000 static, 3000 otherwise)
  --faults a,b      only these faults (kill-holder, kill-any, pause-holder, zombie, clock-step,
                    restart-behind, latency, drop, delete-lock, invalidate-holder,
                    backend-restart, black-hole, server-pause, server-errors, observer-black-hole)
  --history FILE    write the recorded history as JSON
  --resource R      where protected writes go: memory (default, in the orchestrator) or cassandra
                    (@muster/fence-cassandra on the testenv Cassandra of MUSTER_TESTENV_DIR: Cassandra refuses)
  --shared          use the running testenv server (MUSTER_TESTENV_DIR) instead of a private one
                    (no backend-restart then)`;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      minutes: { type: 'string' },
      seconds: { type: 'string' },
      seed: { type: 'string' },
      contenders: { type: 'string' },
      ttl: { type: 'string' },
      faults: { type: 'string' },
      shared: { type: 'boolean' },
      history: { type: 'string' },
      resource: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.error(usage);
    return values.help ? 0 : 2;
  }
  const number = (name: string, text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`--${name} ${JSON.stringify(text)}: expected a positive number`);
    return n;
  };
  const seedText = values.seed ?? process.env.MUSTER_CHAOS_SEED;
  const seed = seedText === undefined ? newSeed() : number('seed', seedText, 0);
  const durationMs =
    values.seconds !== undefined ? number('seconds', values.seconds, 60) * 1000 : number('minutes', values.minutes, 1) * 60_000;
  let adapter = positionals[0]!;
  if (adapter.includes('/') && !adapter.startsWith('file:')) adapter = resolve(adapter);
  const ttl = values.ttl === undefined ? undefined : number('ttl', values.ttl, 0);
  if (values.resource !== undefined && values.resource !== 'memory' && values.resource !== 'cassandra') {
    throw new InvalidArgumentError(`--resource ${JSON.stringify(values.resource)}: expected memory or cassandra`);
  }
  const profile = await profileFor(adapter, { seed, ...(ttl !== undefined ? { ttl } : {}), shared: values.shared ?? false });
  let resource: FencedResourcePort | undefined;
  try {
    if (values.resource === 'cassandra') resource = await cassandraResource(profile.lockName, seed);
    const result = await runChaos({
      profile,
      seed,
      ...(resource ? { resource } : {}),
      contenders: number('contenders', values.contenders, 5),
      durationMs,
      ...(values.faults !== undefined ? { faults: values.faults.split(',') as FaultKind[] } : {}),
      log: (line) => console.error(line),
    });
    if (values.history) writeFileSync(values.history, JSON.stringify(result.history, null, 1));
    console.log(result.table);
    const closing = resource;
    resource = undefined;
    const resourceSays = await closing?.close();
    if (resourceSays) console.log(resourceSays);
    console.log(`replay: muster-chaos ${positionals[0]} --seed ${seed}${closing ? ' --resource cassandra' : ''}`);
    return result.verdict.violations.length === 0 ? 0 : 1;
  } finally {
    await resource?.close().catch(() => undefined);
    await profile.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(MusterError.is(error) ? `muster-chaos: ${error.message}` : error);
    process.exit(2);
  },
);
