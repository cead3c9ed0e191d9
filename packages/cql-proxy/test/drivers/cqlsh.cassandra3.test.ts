// cqlsh 6.2 (PyPI, cached by scripts/testenv/cassandra/cqlsh.mjs) through three proxies in front of
// the three-node testenv Cassandra (127.0.0.1-3), the proxies on 127.0.0.81-83 and one port, as a
// user runs it: a session file with schema changes, batches, SOURCE, paging, COPY TO and FROM (their
// worker processes open sessions of their own to the hosts the token map names), TRACING ON, the
// system tables and DESCRIBE. Everything cqlsh prints, errors and warnings included, must name only
// the proxies: no backend node address, host id or ring token, and no warning that states the
// backend's node count.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CQLSH_VERSION, cqlshPath } from '../../../../scripts/testenv/cassandra/cqlsh.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startStaticCluster, type CassandraEntry, type StaticCluster } from '../proxy/harness.js';
import { backendIdentity, textLeaks, type BackendIdentity } from '../proxy/system-walk.js';

const backend = testServer<CassandraEntry>('cassandra3');
const cqlshTool = testTool('cqlsh');
const TIMEOUT = 180_000;

(backend && cqlshTool ? describe : describe.skip)(`cqlsh ${CQLSH_VERSION} through three proxies in front of cassandra3`, () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  const keyspace = `cqlsh_${process.pid}`;
  let cluster: StaticCluster | undefined;
  let identity: BackendIdentity;
  let cqlsh: string;
  let dir: string;

  beforeAll(async () => {
    [cqlsh, identity] = await Promise.all([cqlshPath(), backendIdentity(backend!.contactPoints)]);
    dir = mkdtempSync(join(tmpdir(), 'muster-cqlsh-'));
    cluster = await startStaticCluster(backend!, { ids, name: 'cqlsh', firstHost: 81 });
  }, TIMEOUT);

  afterAll(async () => {
    if (cqlsh && cluster) await run('proxy-a', ['-e', `DROP KEYSPACE IF EXISTS ${keyspace}; DROP KEYSPACE IF EXISTS ${keyspace}_rf5`]);
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, TIMEOUT);

  /** What cqlsh printed (stdout and stderr; it exits 2 after a failed statement, which some here are meant to be). */
  const run = (via: string, args: string[]): Promise<string> =>
    new Promise((resolve, reject) => {
      const [host, port] = cluster!.endpoint(via).split(':') as [string, string];
      execFile(cqlsh, [host, port, '--request-timeout=30', ...args], { timeout: 120_000 }, (error, stdout, stderr) => {
        if (error && error.code !== 2) reject(new Error(`cqlsh ${args.join(' ')}: ${error.message}\n${stdout}\n${stderr}`));
        else resolve(`${stdout}\n${stderr}`);
      });
    });

  const expectNoLeak = (output: string) => expect(textLeaks(output, identity)).toEqual([]);

  it(
    'a session file: schema, batches, SOURCE, paging, COPY TO/FROM, tracing, system tables; names only the proxies',
    async () => {
      const dc = backend!.localDataCenter;
      const csv = join(dir, 'rows.csv');
      const sourced = join(dir, 'rows.cql');
      writeFileSync(sourced, Array.from({ length: 20 }, (_, i) => `INSERT INTO t (k, c, v) VALUES (${i % 7}, ${i}, 's${i}');`).join('\n'));
      const session = join(dir, 'session.cql');
      writeFileSync(
        session,
        `SHOW HOST;
CONSISTENCY QUORUM;
CREATE KEYSPACE ${keyspace} WITH replication = {'class': 'NetworkTopologyStrategy', '${dc}': 3};
CREATE KEYSPACE ${keyspace}_rf5 WITH replication = {'class': 'NetworkTopologyStrategy', '${dc}': 5};
USE ${keyspace};
CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c));
CREATE TABLE copied (k int, c int, v text, PRIMARY KEY (k, c));
BEGIN BATCH INSERT INTO t (k, c, v) VALUES (100, 1, 'b'); INSERT INTO t (k, c, v) VALUES (101, 1, 'b'); APPLY BATCH;
SOURCE '${sourced}';
PAGING 5;
SELECT * FROM t;
PAGING OFF;
COPY t TO '${csv}';
COPY copied FROM '${csv}';
SELECT count(*) FROM copied;
TRACING ON;
SELECT v FROM t WHERE k = 100;
TRACING OFF;
EXPAND ON;
SELECT * FROM system.local;
SELECT * FROM system.peers_v2;
EXPAND OFF;
DESCRIBE KEYSPACE ${keyspace};
`,
      );
      const output = await run('proxy-a', ['-f', session]);
      expectNoLeak(output);
      expect(output).toContain(`Connected to`);
      expect(output).toContain(`at ${cluster!.endpoint('proxy-a')}`);
      // The RF 5 keyspace was created; the backend's warning that it has fewer nodes was not passed on.
      expect(output).not.toMatch(/number of nodes/i);
      expect(output).toMatch(/\(22 rows\)/); // two batched rows, twenty sourced, read over five pages
      expect(output).toMatch(/22 rows exported/);
      expect(output).toMatch(/22 rows imported/);
      expect(output).toMatch(/count\s*\n-+\s*\n\s*22\b/);
      // Tracing: the statement ran and its rows were printed; the trace itself is refused, cleanly.
      expect(output).toMatch(/v\s*\n-+\s*\n\s*b\s*\n/);
      expect(output).toContain('Unable to fetch query trace');
      expect(output).toContain('system_traces.sessions is not served through the proxy');
      // The system tables show the proxies: this one, and the two others as peers.
      expect(output).toMatch(new RegExp(`rpc_address\\s*\\|\\s*${cluster!.hostOf('proxy-a').replace(/\./g, '\\.')}\\b`));
      for (const peer of ['proxy-b', 'proxy-c']) expect(output).toMatch(new RegExp(`native_address\\s*\\|\\s*${cluster!.hostOf(peer)}\\b`));
      expect(output).toContain(`CREATE TABLE ${keyspace}.copied`);
    },
    TIMEOUT,
  );

  it(
    'DESCRIBE CLUSTER in a keyspace shows the virtual ring: every proxy, 8 tokens each',
    async () => {
      const output = await run('proxy-b', ['-k', keyspace, '-e', 'DESCRIBE CLUSTER']);
      expectNoLeak(output);
      const owners = [...output.matchAll(/^\s*-?\d+\s+\[\/([\d.]+):\d+\]/gm)].map((m) => m[1]);
      expect(owners).toHaveLength(24);
      for (const id of ids) expect(owners.filter((o) => o === cluster!.hostOf(id))).toHaveLength(8);
    },
    TIMEOUT,
  );

  it.each([3, 4, 5])(
    '--protocol-version %i: connects, reads the system tables and user rows, names only the proxies',
    async (version) => {
      const output = await run('proxy-c', [
        `--protocol-version=${version}`,
        '-e',
        `SHOW VERSION; SELECT peer, host_id, tokens FROM system.peers; SELECT count(*) FROM ${keyspace}.t WHERE k = 100; DESCRIBE KEYSPACES`,
      ]);
      expectNoLeak(output);
      expect(output).toContain(`Native protocol v${version}`);
      expect(output).toContain('(2 rows)'); // the two peers of proxy-c
      expect(output).toMatch(/count\s*\n-+\s*\n\s*1\b/);
      expect(output).toContain(keyspace);
    },
    TIMEOUT,
  );
});
