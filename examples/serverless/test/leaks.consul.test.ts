// The handler on the Consul adapter, in fresh processes against the testenv agent: no handle holds
// the process after an invocation (it exits by itself), and after close() no socket or timer is
// left. Without close(), idle keep-alive sockets stay for the next warm invocation (unref'd).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { testServer } from '../../../scripts/testenv/state.mjs';

interface ConsulEntry {
  address: string;
  url: string;
}

const entry = testServer<ConsulEntry>('consul');
const here = dirname(fileURLToPath(import.meta.url));
const ids = ['orders-leak-0', 'orders-leak-1'];

async function agent(method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${entry!.url}${path}`, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

(entry ? describe : describe.skip)('serverless handler on Consul', () => {
  let config = '';
  beforeAll(async () => {
    for (const [i, id] of ids.entries())
      await agent('PUT', '/v1/agent/service/register', { ID: id, Name: 'orders', Address: '127.0.0.1', Port: 8080 + i });
    config = join(mkdtempSync(join(tmpdir(), 'serverless-consul-')), 'muster.yaml');
    // requestTimeout and the lock ttl bound the timers left after close (see the report in README).
    const options = `{ address: "${entry!.address}", minSessionTtl: 1s, lockDelay: 0s, requestTimeout: 2s, keyPrefix: "serverless-leaks/" }`;
    writeFileSync(
      config,
      `version: 1\ndiscovery: { adapter: consul, options: ${options} }\nlock: { adapter: consul, options: { ttl: 3s, ${options.slice(2)} }\n`,
    );
  });
  afterAll(async () => {
    for (const id of ids) await agent('PUT', `/v1/agent/service/deregister/${id}`).catch(() => undefined);
  });

  test.each(['close', 'no-close'])(
    'fresh process, 10 invocations, %s',
    (mode) => {
      const child = spawnSync(process.execPath, [join(here, 'invoke-fresh.mjs'), join(here, '..', 'dist', 'handler.js'), '10', mode], {
        encoding: 'utf8',
        timeout: 30_000,
        // Timers left behind end within 5.5 s: the adapter's close() waits on a fixed
        // AbortSignal.timeout(5000), core's release on max(1 s, 2/3 ttl) = 2 s, requests on 2 s.
        env: { ...process.env, MUSTER_CONFIG: config, SETTLE_MS: '5500' },
      });
      expect({ status: child.status, stderr: child.stderr }).toEqual({ status: 0, stderr: '' });
      const report = JSON.parse(child.stdout) as {
        results: { endpoints: string[]; cold: boolean; token: string }[];
        activeAfter: string[];
        liveAfter: string[];
      };
      expect(report.results[0]).toMatchObject({ endpoints: ids, cold: true });
      expect(report.activeAfter).toEqual([]);
      if (mode === 'close') expect(report.liveAfter).toEqual([]);
      else expect(report.liveAfter.filter((t) => t !== 'TCPWRAP' && t !== 'Timeout')).toEqual([]);
    },
    40_000,
  );
});
