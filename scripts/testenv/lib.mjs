// Shared plumbing for the test servers: where things are cached, free ports, detached daemons
// tracked by pid, readiness polling that points at the log when a server fails to come up.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync, existsSync, renameSync, rmSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Build and download cache, outside the repo, keyed by version in the sub-folder names. */
export function cacheDir(...parts) {
  const base = process.env.MUSTER_TESTENV_CACHE || join(homedir(), '.cache', 'muster-testenv');
  const dir = join(base, ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Per-checkout runtime folder: state file, data dirs, logs, generated kubeconfig. */
export function runDir(...parts) {
  const base = process.env.MUSTER_TESTENV_DIR || join(repoRoot, '.testenv');
  const dir = join(base, ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A port the kernel just handed out on `host`; taken by nothing at the moment of return. */
export function freePort(host = '127.0.0.1') {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Starts a long-running server in its own process group, its output appended to `logFile`.
 * The child outlives this process; stop it with stopProcess(pid).
 */
export function spawnDaemon(cmd, args, { logFile, env = process.env, cwd } = {}) {
  if (!logFile) throw new Error(`spawnDaemon(${cmd}): logFile is required`);
  mkdirSync(dirname(logFile), { recursive: true });
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd], env, cwd });
    if (child.pid === undefined) throw new Error(`could not start ${cmd}; see ${logFile}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(fd);
  }
}

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function tail(file, lines = 30) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` until it resolves true. Fails early when `pid` exits, and names the log file
 * (with its tail) so a server that did not come up can be diagnosed from the message alone.
 */
export async function waitFor(what, check, { timeoutMs = 60_000, intervalMs = 250, pid, logFile } = {}) {
  const deadline = Date.now() + timeoutMs;
  let lastError;
  for (;;) {
    if (pid !== undefined && !isAlive(pid)) {
      throw new Error(`${what}: process ${pid} exited before it was ready; log ${logFile}:\n${tail(logFile)}`);
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError ? ` (last error: ${lastError.message})` : '';
      throw new Error(`${what}: not ready after ${timeoutMs} ms${why}; log ${logFile}:\n${tail(logFile)}`);
    }
    await sleep(intervalMs);
  }
}

/** Stops a daemon's whole process group; escalates to SIGKILL after `timeoutMs`. */
export async function stopProcess(pid, { signal = 'SIGTERM', timeoutMs = 10_000 } = {}) {
  if (!pid || !isAlive(pid)) return;
  const send = (sig) => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  send(signal);
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid)) {
    send('SIGKILL');
    while (isAlive(pid)) await sleep(50);
  }
}

/** Runs a build step with its output shown; throws naming the command on a non-zero exit. */
export function run(cmd, args, { cwd, env = process.env, quiet = false } = {}) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: quiet ? 'ignore' : ['ignore', 'inherit', 'inherit'] });
    child.on('error', (err) => reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}`, { cause: err })));
    child.on('exit', (code, sig) => {
      if (code === 0) resolveRun();
      else reject(new Error(`${cmd} ${args.join(' ')} (in ${cwd ?? process.cwd()}) failed: ${sig ?? `exit ${code}`}`));
    });
  });
}

/**
 * Fills a cache folder atomically: `fill(tmpDir)` writes into a temporary sibling which is renamed
 * into place only when it succeeds, so an interrupted build never leaves a half-written cache entry.
 * Returns `finalDir`; does nothing when it already exists.
 */
export async function atomicDir(finalDir, fill) {
  if (existsSync(finalDir)) return finalDir;
  mkdirSync(dirname(finalDir), { recursive: true });
  const tmp = `${finalDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    await fill(tmp);
    renameSync(tmp, finalDir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  return finalDir;
}

export function log(...args) {
  console.error('[testenv]', ...args);
}
