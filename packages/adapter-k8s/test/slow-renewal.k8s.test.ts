// Defect 13 of issue 11: every answer of the API server arrives 600 ms late (a loopback TCP proxy
// in front of the real apiserver), the lease is 3 s, and a lone holder must keep it for 20 s
// without a break, as client-go's elector does through the same proxy with the same timing.
// Holding depends on core's renewal schedule (renew deadline measured as client-go measures it).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster, type Lease, type Muster } from '@muster/core';
import { eventually } from '@muster/core/testing';
import { startTcpProxy, type TcpProxy } from '../../../scripts/testenv/tcp-proxy.mjs';
import { buildElector } from '../../../scripts/testenv/servers/k8s.mjs';
import { createNamespace, deleteNamespace, entry } from './k8s-testenv.js';
import { electorBinary, startElector } from './elector-probe.js';
import { testTool } from '../../../scripts/testenv/optional-tools.mjs';

const describeSlow = entry && testTool('k8s-elector') ? describe : describe.skip;

const delay = 600;
const ttl = 3000;
const holdFor = 20_000;

describeSlow(`a lone holder behind an API server that answers ${delay} ms late`, () => {
  let namespace = '';
  let proxy: TcpProxy | undefined;
  let dir = '';
  let kubeconfig = '';
  let muster: Muster | undefined;

  beforeAll(async () => {
    await buildElector();
    namespace = await createNamespace('muster-slow');
    const server = new URL(entry!.server);
    proxy = await startTcpProxy({ target: { host: server.hostname, port: Number(server.port) } });
    // The same credentials and CA, through the proxy: the serving certificate names 127.0.0.1, not a port.
    dir = mkdtempSync(join(tmpdir(), 'muster-slow-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, readFileSync(entry!.kubeconfig, 'utf8').replaceAll(entry!.server, `https://${proxy.address}`));
    muster = await createMuster({ lock: { adapter: 'kubernetes', options: { kubeconfig, namespace } } });
  }, 120_000);

  afterAll(async () => {
    await muster?.close();
    await proxy?.close();
    if (namespace) await deleteNamespace(namespace);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(`Muster and client-go both keep a ${ttl / 1000} s lease for ${holdFor / 1000} s`, async () => {
    const go = startElector(
      electorBinary,
      { kubeconfig, namespace, name: 'slow-go', identity: 'go-slow' },
      // client-go's proportions (15 s / 10 s / 2 s) at the same 3 s lease Muster uses.
      { leaseDuration: '3s', renewDeadline: '2s', retryPeriod: '400ms' },
    );
    try {
      const lock = muster!.lock;
      let lease: Lease = await lock.acquire('slow-muster', { ttl, wait: 30_000 });
      await eventually('client-go to lead', async () => (go.events.some((e) => e.event === 'started-leading') ? true : undefined), 30_000);
      proxy!.setDelay({ downstream: delay });

      // Hold for the window; every loss is counted and the lock taken again, as a holder would.
      const end = Date.now() + holdFor;
      let musterLosses = 0;
      const goLossesBefore = go.events.filter((e) => e.event === 'stopped-leading').length;
      while (Date.now() < end) {
        const current = lease;
        const lost = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), end - Date.now());
          const onLost = () => {
            clearTimeout(timer);
            resolve(true);
          };
          if (current.onLost.aborted) onLost();
          else current.onLost.addEventListener('abort', onLost, { once: true });
        });
        if (!lost) break;
        musterLosses++;
        lease = await lock.acquire('slow-muster', { ttl, wait: 30_000 });
      }
      const goLosses = go.events.filter((e) => e.event === 'stopped-leading').length - goLossesBefore;
      proxy!.setDelay({ downstream: 0 });
      console.log(
        `${delay} ms per answer, ttl ${ttl} ms, ${holdFor / 1000} s: Muster lost its lease ${musterLosses} times, client-go ${goLosses} times`,
      );
      expect(goLosses).toBe(0);
      expect(musterLosses).toBe(0);
      await lease.release();
    } finally {
      go.child.kill('SIGTERM');
      await go.exited;
    }
  }, 120_000);
});
