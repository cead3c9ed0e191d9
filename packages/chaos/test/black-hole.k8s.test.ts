// The chaos `black-hole` fault on its own, against the real Kubernetes heartbeat store: a watch
// whose connection keeps quiet instead of failing. The shared API server is reached through a
// private loopback proxy (TLS passes through), so only this test's own connections are swallowed.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMuster, type HeartbeatEvent, type Muster } from '@muster/core';
import { nextMatching } from '@muster/core/testing';
import { TcpProxy, type KubernetesServer } from '@muster/chaos';
import { testServer } from '../../../scripts/testenv/state.mjs';

const k8s = testServer('k8s') as KubernetesServer | undefined;
const heartbeatPrefix = `chaos-bh-${process.pid}-`;
let dir: string;
let proxy: TcpProxy;
let watcher: Muster;
let writer: Muster;

const options = (kubeconfig: string) => ({ kubeconfig, namespace: k8s!.namespace, heartbeatPrefix });

beforeAll(async () => {
  if (!k8s) return;
  const upstream = new URL(k8s.server);
  proxy = new TcpProxy({ host: upstream.hostname, port: Number(upstream.port) });
  await proxy.listen();
  dir = mkdtempSync(join(tmpdir(), 'muster-black-hole-'));
  const viaProxy = join(dir, 'kubeconfig');
  writeFileSync(viaProxy, readFileSync(k8s.kubeconfig, 'utf8').replace(k8s.server, `https://127.0.0.1:${proxy.port}`), { mode: 0o600 });
  watcher = await createMuster({ heartbeat: { adapter: 'kubernetes', options: options(viaProxy) } });
  writer = await createMuster({ heartbeat: { adapter: 'kubernetes', options: options(k8s.kubeconfig) } });
});

afterAll(async () => {
  if (!k8s) return;
  await writer.heartbeat.remove('w').catch(() => undefined);
  await Promise.all([watcher.close(), writer.close()]);
  await proxy.close();
  rmSync(dir, { recursive: true, force: true });
});

(k8s ? test : test.skip)(
  'a heartbeat watch whose stream a black hole swallows sees the members again soon after the hole closes (silent for twice the longest ttl: re-watched)',
  async () => {
    const ttl = 2000;
    const stop = new AbortController();
    const beating = (async () => {
      while (!stop.signal.aborted) {
        await writer.heartbeat.beat('w', { at: Date.now() }, { ttl, group: 'watched', signal: stop.signal }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, ttl / 3));
      }
    })();
    const watch = watcher.heartbeat.watch('watched')[Symbol.asyncIterator]();
    const aliveW = (e: HeartbeatEvent) => e.members.some((m) => m.memberId === 'w' && m.alive);
    try {
      await nextMatching(watch, aliveW, 30_000, "'w' alive");
      proxy.blackHole('down');
      await nextMatching(watch, (e) => !aliveW(e), 30_000, "'w' stale while the watcher is cut off");
      expect(proxy.swallowed).toBeGreaterThan(0);
      proxy.blackHole(undefined);
      // Before: the silent stream was given up only after the client's 90 s idle timeout.
      await nextMatching(watch, aliveW, 45_000, "'w' alive again after the hole closed");
    } finally {
      stop.abort();
      await beating;
      await watch.return?.();
    }
  },
  120_000,
);
