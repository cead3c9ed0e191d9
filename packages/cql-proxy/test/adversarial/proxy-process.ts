import cassandra from 'cassandra-driver';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { freePort, type CassandraEntry } from '../proxy/harness.js';

/**
 * The testenv server the single-backend adversarial files run against: `cassandra` unless
 * MUSTER_ADVERSARIAL_BACKEND names another (`cassandra3`, to rerun them against three nodes).
 */
export function adversarialBackend(): CassandraEntry | undefined {
  return testServer<CassandraEntry>(process.env.MUSTER_ADVERSARIAL_BACKEND ?? 'cassandra');
}

const bin = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

const status = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/**
 * The proxy in its own process (the built CLI), so that its memory and descriptors are its own and
 * a crash is seen as an exit, not as a failed test process.
 */
export class ProxyProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly http: number;
  readonly backend: CassandraEntry;
  /** Extra cassandra-driver options for {@link works} (TLS). */
  readonly driverOptions: Partial<cassandra.ClientOptions>;
  #exit: string | undefined;

  private constructor(
    child: ChildProcess,
    port: number,
    http: number,
    backend: CassandraEntry,
    driverOptions: Partial<cassandra.ClientOptions>,
  ) {
    this.driverOptions = driverOptions;
    this.child = child;
    this.port = port;
    this.http = http;
    this.backend = backend;
    child.once('exit', (code, signal) => (this.#exit = `exited with ${signal ?? `code ${code}`}`));
  }

  /** Starts a proxy with `proxy` merged into its proxy: section (YAML flow text), and waits until ready. */
  static async start(backend: CassandraEntry, proxy = '', driverOptions: Partial<cassandra.ClientOptions> = {}): Promise<ProxyProcess> {
    const port = await freePort();
    const http = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'muster-adversarial-'));
    const config = join(dir, 'proxy.yaml');
    // Listens on 0.0.0.0's loopback part only: 127.0.0.1, while test clients come from other 127/8 addresses.
    writeFileSync(
      config,
      `discovery: { adapter: static, options: { members: [{ id: adv, address: 127.0.0.1, port: ${port} }], self: adv } }
heartbeat: { adapter: static }
proxy:
  listen: { host: 127.0.0.1, port: ${port} }
  http: { host: 127.0.0.1, port: ${http} }
  backend: { contactPoints: [${backend.contactPoints.join(', ')}] }
  log: { level: ${process.env.MUSTER_TEST_LOG ?? 'error'} }
${proxy}
`,
    );
    const child = spawn(process.execPath, [bin, '--config', config], { stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: '' } });
    const running = new ProxyProcess(child, port, http, backend, driverOptions);
    for (let i = 0; ; i++) {
      const ready = await fetch(`http://127.0.0.1:${http}/health/readiness`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (running.#exit) throw new Error(`the proxy ${running.#exit} before it was ready`);
      if (i > 600) throw new Error('the proxy did not become ready within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    return running;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Why the process is gone, or undefined while it runs. */
  get exited(): string | undefined {
    return this.#exit;
  }

  /** Resident memory now, MiB. */
  rss(): number {
    return status(this.child.pid!, 'VmRSS');
  }

  /** Peak resident memory since start, MiB. */
  peakRss(): number {
    return status(this.child.pid!, 'VmHWM');
  }

  /** Open file descriptors of the proxy process. */
  fds(): number {
    return readdirSync(`/proc/${this.child.pid!}/fd`).length;
  }

  async metric(name: string): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.http}/metrics`)).text();
    let total = 0;
    for (const line of text.split('\n')) if (line.startsWith(name)) total += Number(line.split(' ').at(-1));
    return total;
  }

  /**
   * A fresh cassandra-driver client runs a forwarded and an intercepted query end to end. It
   * connects from 127.0.0.1 (the driver cannot choose its source address); hostile sockets in
   * these tests come from other 127/8 addresses. On a loaded machine a driver can time out for
   * reasons of its own, so three attempts are made before the proxy is judged unusable.
   */
  async works(): Promise<boolean> {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const failure = await this.#query();
      if (failure === undefined) return true;
      console.warn(`attempt ${attempt}: a fresh driver failed through the proxy: ${failure}`);
    }
    return false;
  }

  async #query(): Promise<string | undefined> {
    const client = new cassandra.Client({
      contactPoints: [this.address],
      localDataCenter: this.backend.localDataCenter,
      socketOptions: { connectTimeout: 10_000, readTimeout: 20_000 },
      ...this.driverOptions,
    });
    try {
      await client.connect();
      const forwarded = await client.execute('SELECT keyspace_name FROM system_schema.keyspaces');
      const local = await client.execute("SELECT release_version FROM system.local WHERE key = 'local'");
      return forwarded.rowLength > 0 && local.rowLength === 1 ? undefined : 'empty results';
    } catch (error) {
      return (error as Error).message;
    } finally {
      await client.shutdown().catch(() => undefined);
    }
  }

  stop(): void {
    this.child.kill('SIGKILL');
  }
}
