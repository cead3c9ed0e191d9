#!/usr/bin/env node
// testenv build|up|down|restart|status|contact-points [server ...]: obtains, caches and runs the real
// servers the integration tests need, on loopback and free ports.
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isAlive, log, runDir } from './lib.mjs';
import { dropEntry, putEntry, readState, stateFile } from './state.mjs';

const serversDir = join(dirname(fileURLToPath(import.meta.url)), 'servers');
const known = readdirSync(serversDir)
  .filter((f) => f.endsWith('.mjs'))
  .map((f) => f.slice(0, -4))
  .sort();

const load = (name) => import(join(serversDir, `${name}.mjs`));

function usage(code) {
  console.error(`usage: testenv <build|up|down|restart|status|contact-points> [${known.join('|')}|all ...]`);
  process.exit(code);
}

const [command, ...rest] = process.argv.slice(2);
if (!command || command === '--help' || command === '-h') usage(command ? 0 : 2);
const names = rest.length === 0 || rest.includes('all') ? (command === 'down' ? Object.keys(readState()) : known) : rest;
for (const n of names) {
  if (!known.includes(n)) {
    console.error(`testenv: unknown server '${n}'; known: ${known.join(', ')}`);
    process.exit(2);
  }
}

/**
 * One testenv command at a time per server: two `up`s racing in one checkout would start two
 * nodes on one data directory. The lock is a file holding the owner's pid; a dead owner's lock is
 * taken over.
 */
async function withLock(name, fn) {
  const file = join(runDir('locks'), name);
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8') || 0);
      if (owner && isAlive(owner)) throw new Error(`another testenv command (pid ${owner}) is working on ${name}; wait for it`);
      rmSync(file, { force: true });
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

async function main() {
  switch (command) {
    case 'build':
      for (const n of names) await (await load(n)).build();
      return;
    case 'up':
      for (const n of names) {
        await withLock(n, async () => {
          const previous = readState()[n];
          if (previous?.pids?.length && previous.pids.every((pid) => isAlive(pid))) {
            log(`${n} is already up (see ${stateFile()}); 'down ${n}' first to restart it`);
            return;
          }
          if (previous) {
            // The state file outlives its processes (a reboot, a killed session): an entry whose
            // processes are gone is cleared and the server started again, not reported as up.
            log(`${n} is in ${stateFile()} but its processes are gone: clearing it and starting it again`);
            await (await load(n)).down(previous);
            dropEntry(n);
          }
          const started = Date.now();
          const entry = await (await load(n)).up();
          putEntry(n, entry);
          log(`${n} up in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(summary(entry))}`);
        });
      }
      return;
    case 'restart':
      for (const n of names) {
        const entry = readState()[n];
        if (!entry) throw new Error(`${n} is not up`);
        putEntry(n, await (await load(n)).restart(entry));
      }
      return;
    case 'down':
      for (const n of [...names].reverse()) {
        await withLock(n, async () => {
          const entry = readState()[n];
          if (!entry) return;
          await (await load(n)).down(entry);
          dropEntry(n);
          log(`${n} down`);
        });
      }
      return;
    case 'status':
      console.log(JSON.stringify(readState(), null, 2));
      return;
    case 'contact-points':
      // For a shell: MUSTER_PROXY_BACKEND_CONTACT_POINTS=$(npm run --silent testenv -- contact-points cassandra)
      for (const n of names) {
        const entry = readState()[n];
        if (!entry?.contactPoints) throw new Error(`${n} is not up (no contact points in ${stateFile()}); npm run testenv -- up ${n}`);
        console.log(entry.contactPoints.join(','));
      }
      return;
    default:
      usage(2);
  }
}

function summary(entry) {
  const { pids: _p, logs, ...rest } = entry;
  return { ...rest, logs };
}

main().catch((err) => {
  console.error(`testenv ${command}: ${err.message}`);
  process.exit(1);
});
