// `npm test`'s jest runs, after the type check: every file but the backend-fault one, then that one
// in a jest process of its own (the drivers it leaves reconnecting must not show up in other files'
// leak checks, and it starts and stops a private three-node Cassandra, which is no neighbour for
// timing).
//
// The chaos files spend about six minutes of wall time and half a minute of CPU waiting for leases
// to lapse and processes to restart. MUSTER_TEST_LANES=parallel runs them in a second jest process
// beside the rest (their output printed after it), which saves those minutes on a quiet machine;
// it is not the default because on a loaded one (load 20 on 2 cores) two scheduler failover files,
// six node processes each, did not start within their bounds beside the chaos contenders.
//
//   node scripts/test/lanes.mjs              the whole suite
//   node scripts/test/lanes.mjs <jest args>  one jest run with those arguments (a file, -t, ...)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const JEST = ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js'];
const CHAOS = 'packages/chaos/test';
const BACKEND_FAULTS = 'packages/cql-proxy/test/proxy/backend-faults';

const children = new Set();
/** Set by SIGINT/SIGTERM: the running jest processes are stopped, and no further lane starts. */
let interrupted = false;

/** One jest process; resolves with its exit code (a signal counts as a failure). */
function jest(args, output) {
  return new Promise((resolve) => {
    const stdio = output === undefined ? 'inherit' : ['ignore', output, output];
    const child = spawn(process.execPath, [...JEST, ...args], { stdio });
    children.add(child);
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** A lane whose output is kept in a file and printed once the lane beside it has finished. */
function quietLane(name, args) {
  const dir = mkdtempSync(join(tmpdir(), `muster-lane-${name}-`));
  const path = join(dir, 'output.txt');
  const fd = openSync(path, 'w');
  const started = Date.now();
  const done = jest(args, fd).then((code) => {
    closeSync(fd);
    const seconds = Math.round((Date.now() - started) / 1000);
    process.stderr.write(`\n[lanes] ${name} lane finished in ${seconds} s (exit ${code}); its output follows the main lane's\n`);
    return code;
  });
  return {
    done,
    print() {
      process.stderr.write(`\n[lanes] ===== ${name} lane (jest ${args.join(' ')}) =====\n`);
      process.stderr.write(readFileSync(path));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true;
    for (const child of children) child.kill(signal);
  });
}

async function lanes() {
  const serial = process.env.MUSTER_TEST_LANES !== 'parallel';
  const mainArgs = ['--testPathIgnorePatterns', BACKEND_FAULTS, CHAOS];
  let codes;
  if (serial) {
    codes = [await jest(['--testPathIgnorePatterns', BACKEND_FAULTS])];
  } else {
    const chaos = quietLane('chaos', [CHAOS]);
    const main = await jest(mainArgs);
    const chaosCode = await chaos.done;
    chaos.print();
    codes = [main, chaosCode];
  }
  if (!interrupted) codes.push(await jest([BACKEND_FAULTS]));
  if (interrupted) return 130;
  const names = serial ? ['main', 'backend-faults'] : ['main', 'chaos', 'backend-faults'];
  process.stderr.write(`[lanes] ${codes.map((code, i) => `${names[i]} ${code === 0 ? 'passed' : `FAILED (exit ${code})`}`).join(', ')}\n`);
  return codes.every((code) => code === 0) ? 0 : 1;
}

const args = process.argv.slice(2);
const code = args.length > 0 ? await jest(args) : await lanes();
process.exitCode = interrupted ? 130 : code;
