// Issue 12, 1: a driver that attaches a custom payload (frame flag 0x04) to its requests still sees
// only the virtual cluster: the Java driver 4.x (setCustomPayload) and the Python cassandra-driver
// (custom_payload=) through one proxy (on 127.0.0.50) in front of the three-node Cassandra
// (127.0.0.1-3), reading system.local/peers/peers_v2 with a payload.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { javaDriverJars, pythonDriver } from '../../../../scripts/testenv/drivers.mjs';
import { testTool } from '../../../../scripts/testenv/optional-tools.mjs';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { startProxy, type CassandraEntry, type RunningProxy } from '../proxy/harness.js';
import { backendIdentity, type BackendIdentity } from '../proxy/system-walk.js';

const backend = testServer<CassandraEntry>('cassandra3');
const TIMEOUT = 240_000;
const script = fileURLToPath(new URL('./python/custom_payload.py', import.meta.url));
const javaSource = fileURLToPath(new URL('./java/CustomPayloadCheck.java', import.meta.url));
const java = testTool('java-driver');
const python = testTool('python-driver');

type Row = Record<string, string>;
interface Report {
  protocolVersion?: number;
  local?: Row[];
  peers?: Row[];
  peersV2?: Row[];
  preparedLocal?: Row[];
  forwarded?: string[];
  gossip?: string;
  error?: string;
  trace?: string;
}

function run(exe: string, args: string[]): Promise<Report> {
  return new Promise((resolve, reject) => {
    execFile(exe, args, { timeout: 120_000, env: { ...process.env, PYTHONWARNINGS: 'ignore' } }, (error, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop() ?? '';
      try {
        resolve(JSON.parse(line) as Report);
      } catch {
        reject(new Error(`${exe} ${args.join(' ')}: ${error?.message ?? 'no JSON'}\nstdout: ${stdout}\nstderr: ${stderr.slice(-4000)}`));
      }
    });
  });
}

(backend && python ? describe : describe.skip)('a custom payload on every request (Python cassandra-driver)', () => {
  let running: RunningProxy;
  let identity: BackendIdentity;
  let exe: string;
  beforeAll(async () => {
    exe = (await pythonDriver()).python;
    identity = await backendIdentity(backend!.contactPoints);
    running = await startProxy(backend!, { host: '127.0.0.50' });
  }, TIMEOUT);
  afterAll(async () => {
    await running?.stop();
  });

  /** No backend address, host id or token anywhere in what the driver printed. */
  const noBackendIn = (report: Report) => {
    const text = JSON.stringify(report);
    for (const address of identity.addresses) expect(text).not.toMatch(new RegExp(`(?<![\\d.])${address.replace(/\./g, '\\.')}(?!\\d)`));
    for (const id of identity.hostIds) expect(text).not.toContain(id);
    for (const token of identity.tokens) expect(text).not.toContain(token);
  };

  (java ? it : it.skip)(
    'the Java driver 4.x (setCustomPayload): system tables answered from the virtual cluster',
    async () => {
      const jars = await javaDriverJars();
      const classes = mkdtempSync(join(tmpdir(), 'muster-java-payload-'));
      try {
        await new Promise<void>((resolve, reject) =>
          execFile('javac', ['-cp', join(jars.dir, '*'), '-d', classes, javaSource], { timeout: 120_000 }, (error, _out, stderr) =>
            error ? reject(new Error(`javac: ${error.message}\n${stderr}`)) : resolve(),
          ),
        );
        const report = await run('java', [
          '-cp',
          `${join(jars.dir, '*')}:${classes}`,
          'CustomPayloadCheck',
          running.address,
          backend!.localDataCenter,
        ]);
        expect(report.error).toBeUndefined();
        const self = running.proxy.topology().members[0]!;
        for (const local of [report.local!, report.preparedLocal!]) {
          expect(local).toEqual([{ rpc_address: '/127.0.0.50', host_id: self.hostId, tokens: expect.any(String) }]);
        }
        expect(report.peersV2).toEqual([]);
        expect(report.gossip).toMatch(/InvalidQueryException.*system_views.gossip_info is not served through the proxy/);
        noBackendIn(report);
      } finally {
        rmSync(classes, { recursive: true, force: true });
      }
    },
    TIMEOUT,
  );

  it.each([4, 5])(
    'protocol v%i: system tables answered from the virtual cluster, other reads forwarded with their payload',
    async (version) => {
      const report = await run(exe, [script, running.address, backend!.localDataCenter, String(version)]);
      expect(report.error ? `${report.error}\n${report.trace}` : undefined).toBeUndefined();
      expect(report.protocolVersion).toBe(version);
      const self = running.proxy.topology().members[0]!;
      for (const local of [report.local!, report.preparedLocal!]) {
        expect(local).toEqual([{ rpc_address: '127.0.0.50', host_id: self.hostId, tokens: expect.any(String) }]);
      }
      expect(report.peers).toEqual([]);
      expect(report.peersV2).toEqual([]);
      expect(report.forwarded).toEqual(expect.arrayContaining(['system', 'system_schema']));
      expect(report.gossip).toMatch(/InvalidRequest.*system_views.gossip_info is not served through the proxy/);
      noBackendIn(report);
    },
    TIMEOUT,
  );
});
