// The Java driver 4.x (java-driver-core from Maven Central, jars cached outside the repo) through
// three proxies on distinct addresses and ports. Beyond discovery (system.peers_v2, native_port)
// it runs the driver's own single-node refresh for every node: for a peer that is
// `SELECT * FROM system.peers_v2 WHERE peer = :address AND peer_port = :port` and the driver takes
// the first row, so it only gets each node's own host id back if the proxy evaluates WHERE.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { javaDriverJars } from '../../../../scripts/testenv/drivers.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startStaticCluster, type CassandraEntry, type StaticCluster } from '../proxy/harness.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 300_000;
const source = fileURLToPath(new URL('./java/DriverCheck.java', import.meta.url));

const java = testTool('java-driver');

interface Report {
  error?: string;
  trace?: string;
  protocolVersion?: number;
  usesPeersV2?: boolean | null;
  nodes?: { endpoint: string; hostId: string; dc: string; state: string; openConnections: number; broadcast: string | null }[];
  refreshed?: Record<string, { hostId: string; endpoint: string; broadcast: string | null } | 'absent'>;
  coordinators?: Record<string, string>;
  keyspaces?: string[];
  controlNode?: string;
  connectMs?: number;
  schemaAgreement?: boolean;
  schemaRefreshError?: string;
  preparedVariables?: number;
}

function exec(cmd: string, args: string[], timeout = 120_000): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && !stdout.trim()) reject(new Error(`${cmd} ${args.join(' ')}: ${error.message}\n${stderr.slice(-4000)}`));
      else resolve({ stdout, stderr });
    });
  });
}

(backend && java ? describe : describe.skip)('Java driver 4.x through three proxies', () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  let cluster: StaticCluster | undefined;
  let classpath: string;
  let classes: string;
  let version: string;

  beforeAll(async () => {
    const jars = await javaDriverJars();
    version = jars.version;
    classes = mkdtempSync(join(tmpdir(), 'muster-java-driver-'));
    classpath = `${join(jars.dir, '*')}:${classes}`;
    await exec('javac', ['-cp', join(jars.dir, '*'), '-d', classes, source]);
    cluster = await startStaticCluster(backend!, { ids, name: 'java-driver', portPerMember: true });
  }, TIMEOUT);

  afterAll(async () => {
    await cluster?.stop();
    if (classes) rmSync(classes, { recursive: true, force: true });
  }, TIMEOUT);

  const endpoint = (id: string) => cluster!.endpoint(id);
  const run = async (contact: string, protocol: string): Promise<Report> => {
    const { stdout, stderr } = await exec('java', ['-cp', classpath, 'DriverCheck', contact, backend!.localDataCenter, '3', protocol]);
    const line = stdout.trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(line) as Report;
    } catch {
      throw new Error(`DriverCheck printed no JSON:\n${stdout}\n${stderr.slice(-4000)}`);
    }
  };

  const check = (report: Report, protocolVersion: number) => {
    expect(report.error ? `${report.error}\n${report.trace}` : undefined).toBeUndefined();
    expect(report.protocolVersion).toBe(protocolVersion);
    expect(report.usesPeersV2).toBe(true);
    const hostIds = new Map(
      cluster!.proxies
        .get('proxy-a')!
        .proxy.topology()
        .members.map((m) => [`${m.address}:${m.port}`, m.hostId]),
    );
    expect(report.nodes!.map((n) => n.endpoint)).toEqual(ids.map(endpoint));
    for (const n of report.nodes!) {
      expect(n).toMatchObject({ hostId: hostIds.get(n.endpoint), dc: backend!.localDataCenter, state: 'UP' });
      expect(n.openConnections).toBeGreaterThan(0);
    }
    // The driver's refresh of each peer found that node's own row (WHERE evaluated, first row
    // right); the control node is skipped by the driver itself.
    expect(Object.keys(report.refreshed!)).toEqual(ids.map(endpoint));
    expect(ids.map(endpoint)).toContain(report.controlNode);
    for (const [at, info] of Object.entries(report.refreshed!)) {
      if (at === report.controlNode) expect(info).toBe('absent');
      else expect(info).toMatchObject({ hostId: hostIds.get(at), endpoint: at, broadcast: at });
    }
    expect(Object.keys(report.coordinators!)).toEqual(ids.map(endpoint));
    for (const [at, hostId] of Object.entries(report.coordinators!)) expect(hostId).toBe(hostIds.get(at));
    expect(report.keyspaces).toEqual(expect.arrayContaining(['system', 'system_schema']));
    // Schema metadata comes from the backend through the proxies, and the peers agree on it.
    expect(report.schemaAgreement).toBe(true);
    expect(report.schemaRefreshError).toBeUndefined();
    expect(report.preparedVariables).toBe(2);
  };

  it(
    "negotiated protocol: discovers all three, pools to each, node refresh returns each node's own row",
    async () => {
      const report = await run(endpoint('proxy-a'), 'auto');
      console.log(`java-driver-core ${version}: ${JSON.stringify({ ...report, nodes: report.nodes?.length })}`);
      check(report, 5);
    },
    TIMEOUT,
  );

  it(
    'protocol V4: the same',
    async () => {
      check(await run(endpoint('proxy-b'), 'V4'), 4);
    },
    TIMEOUT,
  );
});
