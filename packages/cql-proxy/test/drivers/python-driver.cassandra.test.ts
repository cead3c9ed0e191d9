// The Python cassandra-driver (pure Python, from PyPI, in a venv outside the repo) through three
// proxies. Each proxy listens on its own address AND its own port: the driver can only reach all
// three if it discovers them from system.peers_v2 and dials each at its native_port (from
// system.peers, v1, it would dial every peer on the contact point's port and find one host).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pythonDriver } from '../../../../scripts/testenv/drivers.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startStaticCluster, type CassandraEntry, type StaticCluster } from '../proxy/harness.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 240_000;
const script = fileURLToPath(new URL('./python/check_cluster.py', import.meta.url));

const python = testTool('python-driver');

interface Report {
  driver: string;
  requested: string;
  error?: string;
  protocolVersion?: number;
  usesPeersV2?: boolean;
  hosts?: { address: string; port: number; hostId: string; dc: string; up: boolean; release: string }[];
  ring?: number;
  coordinators?: Record<string, string>;
  keyspaces?: string[];
  peerLookups?: Record<string, Record<string, string[]>>;
  trace?: string;
}

function run(exe: string, args: string[]): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(exe, args, { timeout: 90_000, env: { ...process.env, PYTHONWARNINGS: 'ignore' } }, (error, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as Report);
      } catch {
        reject(new Error(`${exe} ${args.join(' ')}: ${error?.message ?? 'no JSON'}\nstdout: ${stdout}\nstderr: ${stderr.slice(-4000)}`));
      }
    });
  });
}

(backend && python ? describe : describe.skip)('Python cassandra-driver through three proxies', () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  let cluster: StaticCluster | undefined;
  let exe: string;

  beforeAll(async () => {
    exe = (await pythonDriver()).python;
    cluster = await startStaticCluster(backend!, { ids, name: 'py-driver', portPerMember: true });
  }, TIMEOUT);

  afterAll(async () => {
    await cluster?.stop();
  }, TIMEOUT);

  const endpoint = (id: string) => cluster!.endpoint(id);
  const hostOf = (id: string) => cluster!.hostOf(id);
  const hostIds = () =>
    new Map(
      cluster!.proxies
        .get('proxy-a')!
        .proxy.topology()
        .members.map((m) => [`${m.address}:${m.port}`, m.hostId]),
    );

  const checkFull = (report: Report, version: number) => {
    expect(report.error ? `${report.error}\n${report.trace}` : undefined).toBeUndefined();
    expect(report.protocolVersion).toBe(version);
    // It read peers_v2 (the server offers it) and dialled each proxy at its native_port.
    expect(report.usesPeersV2).toBe(true);
    expect(report.hosts!.map((h) => `${h.address}:${h.port}`)).toEqual(ids.map(endpoint));
    expect(report.hosts!.every((h) => h.up && h.dc === backend!.localDataCenter)).toBe(true);
    const expectedIds = hostIds();
    for (const h of report.hosts!) expect(h.hostId).toBe(expectedIds.get(`${h.address}:${h.port}`));
    expect(report.ring).toBe(24); // 8 tokens per proxy
    // Queries went to all three, and each answered system.local about itself.
    expect(Object.keys(report.coordinators!).sort()).toEqual(ids.map(endpoint));
    for (const [where, hostId] of Object.entries(report.coordinators!)) expect(hostId).toBe(expectedIds.get(where));
    expect(report.keyspaces).toEqual(expect.arrayContaining(['system', 'system_schema']));
    // A prepared WHERE peer = ? run on each host about every host: the one row, none for itself.
    const idOfAddress = new Map(ids.map((id) => [hostOf(id), expectedIds.get(endpoint(id))]));
    expect(Object.keys(report.peerLookups!).sort()).toEqual(ids.map(endpoint));
    for (const [on, lookups] of Object.entries(report.peerLookups!)) {
      for (const [address, found] of Object.entries(lookups)) {
        expect([on, address, found]).toEqual([on, address, on.startsWith(`${address}:`) ? [] : [idOfAddress.get(address)]]);
      }
    }
  };

  it(
    'protocol_version=5: discovers all three from system.peers_v2, all up, queries spread over them',
    async () => {
      const report = await run(exe, [script, endpoint('proxy-a'), backend!.localDataCenter, '5', '3']);
      console.log(`cassandra-driver ${report.driver} v5: ${JSON.stringify({ ...report, hosts: report.hosts?.length })}`);
      checkFull(report, 5);
    },
    TIMEOUT,
  );

  it(
    'protocol_version=4: the same',
    async () => {
      const report = await run(exe, [script, endpoint('proxy-b'), backend!.localDataCenter, '4', '3']);
      checkFull(report, 4);
    },
    TIMEOUT,
  );

  it(
    'no protocol_version: the driver negotiates, and lands on v5',
    async () => {
      const report = await run(exe, [script, endpoint('proxy-c'), backend!.localDataCenter, 'auto', '3']);
      checkFull(report, 5);
    },
    TIMEOUT,
  );
});
