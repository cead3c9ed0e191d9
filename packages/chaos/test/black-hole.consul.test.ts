// The chaos `black-hole` fault on its own, against the real Consul adapter: a connection that
// keeps quiet instead of failing. The shared agent is reached through a private loopback proxy,
// so only this test's own connections are swallowed.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { createMuster, type HeartbeatEvent, type Muster } from '@muster/core';
import { nextMatching } from '@muster/core/testing';
import { TcpProxy } from '@muster/chaos';
import { testServer } from '../../../scripts/testenv/state.mjs';

const consul = testServer('consul') as { address: string; url: string } | undefined;
const keyPrefix = `chaos-black-hole-${process.pid}/`;
let proxy: TcpProxy;
let muster: Muster;

beforeAll(async () => {
  if (!consul) return;
  const [host, port] = consul.address.split(':') as [string, string];
  proxy = new TcpProxy({ host, port: Number(port) });
  await proxy.listen();
  muster = await createMuster({
    heartbeat: { adapter: 'consul', options: { address: `127.0.0.1:${proxy.port}`, keyPrefix, minSessionTtl: '1s' } },
  });
});

afterAll(async () => {
  if (!consul) return;
  await muster.close();
  await proxy.close();
  await fetch(`${consul.url}/v1/kv/${keyPrefix}?recurse=true`, { method: 'DELETE' });
});

(consul ? test : test.skip)(
  "a beat whose answers are swallowed gives up at its ttl (not the client's 10 s request timeout), and the next one lands once the hole closes",
  async () => {
    const ttl = 1500;
    await muster.heartbeat.beat('m', { n: 1 }, { ttl });
    // Towards the contender only: Consul applies the write, its answer never arrives.
    proxy.blackHole('down');
    // Before: the beat waited out the request timeout and failed as MUSTER_BACKEND ('no answer within 10000 ms').
    await expect(muster.heartbeat.beat('m', { n: 2 }, { ttl })).rejects.toMatchObject({ code: 'MUSTER_TIMEOUT' });
    proxy.blackHole(undefined);
    await muster.heartbeat.beat('m', { n: 3 }, { ttl });
    expect((await muster.heartbeat.get('m'))?.payload).toEqual({ n: 3 });
  },
  60_000,
);

(consul ? test : test.skip)(
  'a watch whose answers are swallowed sees the members again soon after the hole closes (its blocking query waits twice the longest ttl, not watchWait)',
  async () => {
    const ttl = 1500;
    // The writer goes direct: only the watcher is behind the black hole.
    const writer = await createMuster({
      heartbeat: { adapter: 'consul', options: { address: consul!.address, keyPrefix, minSessionTtl: '1s' } },
    });
    const stop = new AbortController();
    const beating = (async () => {
      while (!stop.signal.aborted) {
        await writer.heartbeat.beat('w', { at: Date.now() }, { ttl, group: 'watched', signal: stop.signal }).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, ttl / 3));
      }
    })();
    const watch = muster.heartbeat.watch('watched')[Symbol.asyncIterator]();
    const aliveW = (e: HeartbeatEvent) => e.members.some((m) => m.memberId === 'w' && m.alive);
    try {
      await nextMatching(watch, aliveW, 20_000, "'w' alive");
      proxy.blackHole('down');
      await nextMatching(watch, (e) => !aliveW(e), 20_000, "'w' stale while the watcher is cut off");
      proxy.blackHole(undefined);
      // Before: the swallowed blocking query (wait 60 s) held the watch for 60 × 17/16 + 5 s ≈ 69 s.
      await nextMatching(watch, aliveW, 30_000, "'w' alive again after the hole closed");
    } finally {
      stop.abort();
      await beating;
      await watch.return?.();
      await writer.close();
    }
  },
  90_000,
);
