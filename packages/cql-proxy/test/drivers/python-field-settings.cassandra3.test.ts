// The Python cassandra-driver with the settings an application tunes, through three proxies in
// front of the three-node Cassandra: protocol v5 with LZ4 segments and v4 with snappy frames, a
// token-aware DC-aware policy at QUORUM with speculative execution. It runs USING TIMESTAMP, a
// counter, a UDT, a tuple, a duration and a vector, an 8 MiB blob, a batch that draws a warning,
// paging whose state is carried from one proxy to the next, LWT at SERIAL and LOCAL_SERIAL, and a
// session with a local DC that does not exist. Whatever it prints must name no backend node.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PYTHON_COMPRESSION, pythonDriver } from '../../../../scripts/testenv/drivers.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startStaticCluster, type CassandraEntry, type StaticCluster } from '../proxy/harness.js';
import { backendIdentity, textLeaks, type BackendIdentity } from '../proxy/system-walk.js';

const backend = testServer<CassandraEntry>('cassandra3');
const TIMEOUT = 240_000;
const script = fileURLToPath(new URL('./python/field_settings.py', import.meta.url));
const python = testTool('python-driver');

interface Paged {
  rows: number[];
  coordinators: string[];
}
interface Report {
  driver: string;
  error?: string;
  trace?: string;
  protocolVersion?: number;
  compressed?: boolean;
  hosts?: { endpoint: string; hostId: string; dc: string }[];
  usingTimestamp?: unknown;
  counter?: unknown;
  kinds?: unknown;
  blob?: unknown;
  warnings?: unknown;
  paging?: { simple: Paged; prepared: Paged };
  lwt?: unknown;
  wrongDc?: string;
}

function run(exe: string, args: string[]): Promise<{ report: Report; stdout: string }> {
  return new Promise((resolve, reject) => {
    execFile(exe, args, { timeout: 120_000, env: { ...process.env, PYTHONWARNINGS: 'ignore' } }, (error, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve({ report: JSON.parse(line) as Report, stdout });
      } catch {
        reject(new Error(`${exe} ${args.join(' ')}: ${error?.message ?? 'no JSON'}\nstdout: ${stdout}\nstderr: ${stderr.slice(-4000)}`));
      }
    });
  });
}

(backend && python ? describe : describe.skip)('Python cassandra-driver with field settings through three proxies', () => {
  const ids = ['proxy-a', 'proxy-b', 'proxy-c'];
  let cluster: StaticCluster | undefined;
  let exe: string;
  let identity: BackendIdentity;

  beforeAll(async () => {
    exe = (await pythonDriver({ extras: PYTHON_COMPRESSION })).python;
    identity = await backendIdentity(backend!.contactPoints);
    // On 127.0.0.11-13, apart from the backend's 127.0.0.1-3, so any backend address in the output is a leak.
    cluster = await startStaticCluster(backend!, { ids, name: 'py-field', portPerMember: true, firstHost: 11 });
  }, TIMEOUT);

  afterAll(async () => {
    await cluster?.stop();
  }, TIMEOUT);

  it.each([
    [5, 'lz4'],
    [4, 'snappy'],
  ])(
    'protocol v%i with %s compression',
    async (version, compression) => {
      const via = cluster!.endpoint(ids[version % ids.length]!);
      const { report, stdout } = await run(exe, [script, via, backend!.localDataCenter, String(version), compression, 'muster_field']);
      console.log(`cassandra-driver ${report.driver} v${version} ${compression}: ${stdout.length} bytes of report`);
      expect(report.error ? `${report.error}\n${report.trace}` : undefined).toBeUndefined();
      expect([report.protocolVersion, report.compressed]).toEqual([version, true]);
      const members = cluster!.proxies.get('proxy-a')!.proxy.topology().members as { address: string; port: number; hostId: string }[];
      expect(report.hosts).toEqual(
        members.map((m) => ({ endpoint: `${m.address}:${m.port}`, hostId: m.hostId, dc: backend!.localDataCenter })),
      );
      expect(report.usingTimestamp).toBe(4242);
      expect(report.counter).toBe(5);
      expect(report.kinds).toEqual({ a: ['main', 7], t: [2, 'b'], d: [1, 2, 3_000_000_000], vec: [1.5, 2.5, 3.5] });
      expect(report.blob).toEqual({ length: 8 * 1024 * 1024, same: true });
      expect(report.warnings).toEqual([expect.stringMatching(/^Batch for \[muster_field\.rows\] is of size 18222, exceeding/)]);
      const everyProxy = ids.map((id) => cluster!.endpoint(id)).sort();
      for (const paged of [report.paging!.simple, report.paging!.prepared]) {
        expect(paged.rows).toEqual(Array.from({ length: 25 }, (_, i) => i));
        expect([...paged.coordinators].sort()).toEqual(everyProxy); // page 1 from one proxy, page 2 from the next
      }
      expect(report.lwt).toMatchObject({ applied: [true, false, true, false], read: 2 });
      expect(report.wrongDc).toMatch(/^NoHostAvailable/);
      expect(textLeaks(stdout, identity)).toEqual([]);
    },
    TIMEOUT,
  );
});
