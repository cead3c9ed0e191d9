// The watch loop against a scripted API: what it does on 410, on a broken watch, on a refused
// first list, and how it backs off (through the injected delay, so no real time passes).
import { describe, expect, test } from '@jest/globals';
import { KubernetesError, type KubeClient, type ListResult, type WatchEvent } from '../src/client.js';
import { endpointSliceDiscovery } from '../src/discovery.js';
import type { EndpointSliceObject } from '../src/endpoint-slices.js';
import { eventSummary as summary, takeEvents as take } from '@muster/core/testing';

const slice = (name: string, ...pods: [string, string][]): EndpointSliceObject => ({
  metadata: { name, resourceVersion: '1' },
  endpoints: pods.map(([pod, address]) => ({ addresses: [address], targetRef: { name: pod } })),
  ports: [{ name: 'cql', port: 9042 }],
});
const failure = (status: number | undefined, reason = '') =>
  new KubernetesError('watch', 'endpointslices.discovery.k8s.io', `${status} ${reason}`, { ...(status ? { status } : {}), reason });

type Step = { list: EndpointSliceObject[] } | { list: Error } | { watch: (WatchEvent<EndpointSliceObject> | Error)[] };

/** A fake API that plays `steps` in order: each list() and watch() takes the next step of its kind. */
function scripted(steps: Step[]) {
  const calls: string[] = [];
  let rv = 100;
  const take = <K extends 'list' | 'watch'>(kind: K) => {
    const i = steps.findIndex((s) => kind in s);
    if (i < 0) return undefined;
    return steps.splice(i, 1)[0] as Extract<Step, Record<K, unknown>>;
  };
  const client = {
    async list(): Promise<ListResult<EndpointSliceObject>> {
      calls.push('list');
      const step = take('list');
      if (!step) throw failure(503, 'script ended');
      if (step.list instanceof Error) throw step.list;
      return { items: step.list, resourceVersion: String(++rv) };
    },
    async *watch(_r: unknown, options: { resourceVersion: string; signal?: AbortSignal }): AsyncGenerator<WatchEvent<EndpointSliceObject>> {
      calls.push(`watch@${options.resourceVersion}`);
      const step = take('watch');
      if (!step) {
        // Nothing more scripted: hang until aborted, like a quiet watch.
        await new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve(), { once: true }));
        return;
      }
      for (const event of step.watch) {
        if (event instanceof Error) throw event;
        yield event;
      }
    },
    close() {},
  };
  return { client: client as unknown as KubeClient, calls };
}

describe('EndpointSlice discovery watch loop (backend + core createDiscovery)', () => {
  test('410 Gone relists at once, without degraded, and emits the diff', async () => {
    const { client, calls } = scripted([
      { list: [slice('s1', ['a', '10.0.0.1'])] },
      { watch: [{ type: 'ADDED', object: slice('s2', ['b', '10.0.0.2']) }, failure(410, 'Expired')] },
      { list: [slice('s2', ['b', '10.0.0.2']), slice('s3', ['c', '10.0.0.3'])] },
    ]);
    const delays: number[] = [];
    const d = endpointSliceDiscovery({ client, backoff: { delay: async (ms) => void delays.push(ms) } });
    const events = await take(d.watch('svc'), 4);
    // The relist's changes come from one view: each carries the state after all of them (the port allows it).
    expect(events.map(summary)).toEqual(['snapshot[a]', 'added:b[a,b]', 'removed:a[b,c]', 'added:c[b,c]']);
    expect(delays).toEqual([]);
    expect(calls.slice(0, 3)).toEqual(['list', 'watch@101', 'list']);
    await d.close();
  });

  test('a broken watch reports degraded with the last endpoints, backs off with jitter, then recovered and the diff', async () => {
    const { client } = scripted([
      { list: [slice('s1', ['a', '10.0.0.1'])] },
      { watch: [failure(undefined, 'socket hang up')] },
      { list: failure(503, 'ServiceUnavailable') },
      { list: failure(503, 'ServiceUnavailable') },
      { list: [slice('s1', ['a', '10.0.0.1'], ['b', '10.0.0.2'])] },
    ]);
    const delays: number[] = [];
    const d = endpointSliceDiscovery({ client, backoff: { delay: async (ms) => void delays.push(ms), random: () => 1 } });
    const events = await take(d.watch('svc'), 4);
    expect(events.map(summary)).toEqual(['snapshot[a]', 'degraded[a]', 'recovered[a]', 'added:b[a,b]']);
    expect(delays).toEqual([800, 1600, 3200]);
    await d.close();
  });

  test('backoff doubles from 0.8 s up to 30 s and resets after a good list', async () => {
    const { client } = scripted([
      { list: [] },
      ...Array.from({ length: 8 }, () => ({ list: failure(500) })),
      { watch: [failure(500)] },
      { list: [slice('s1', ['a', '10.0.0.1'])] },
      { watch: [failure(500)] },
      { list: [slice('s1', ['a', '10.0.0.1'])] },
    ]);
    const delays: number[] = [];
    const d = endpointSliceDiscovery({ client, backoff: { delay: async (ms) => void delays.push(ms), random: () => 1 } });
    const events = await take(d.watch('svc'), 3);
    expect(events.map((e) => e.type)).toEqual(['snapshot', 'degraded', 'recovered']);
    // The scripted watch failure comes first (the loop watches after the first list).
    expect(delays.slice(0, 7)).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000]);
    await d.close();
  });

  test('a refused first list (403) fails the stream with the error instead of retrying silently', async () => {
    const { client } = scripted([{ list: failure(403, 'Forbidden') }]);
    const d = endpointSliceDiscovery({ client, backoff: { delay: async () => undefined } });
    await expect(take(d.watch('svc'), 1)).rejects.toMatchObject({ status: 403 });
    await d.close();
  });

  test('resync relists on schedule and emits only what differs', async () => {
    let now = 0;
    const { client, calls } = scripted([
      { list: [slice('s1', ['a', '10.0.0.1'])] },
      { watch: [] },
      { list: [slice('s1', ['a', '10.0.0.1'])] },
      { watch: [] },
      { list: [slice('s1', ['a', '10.0.0.9'])] },
    ]);
    const clock = { now: () => (now += 70_000) };
    const d = endpointSliceDiscovery({ client, resync: 60_000, clock });
    const events = await take(d.watch('svc'), 2);
    expect(events.map(summary)).toEqual(['snapshot[a]', 'updated:a[a]']);
    expect(calls.filter((c) => c === 'list')).toHaveLength(3);
    await d.close();
  });

  test('list is one call, nothing left running; self is the POD_NAME endpoint once seen', async () => {
    const { client, calls } = scripted([{ list: [slice('s1', ['me', '10.0.0.5'], ['other', '10.0.0.6'])] }]);
    const d = endpointSliceDiscovery({ client, podName: 'me' });
    expect(d.self).toBeUndefined();
    expect((await d.list('svc')).map((e) => e.id)).toEqual(['me', 'other']);
    expect(calls).toEqual(['list']);
    expect(d.self?.address).toBe('10.0.0.5');
    await d.close();
  });
});
