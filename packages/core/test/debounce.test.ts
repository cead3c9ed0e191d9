import { describe, expect, it, jest } from '@jest/globals';
import { debounceDiscovery, type DiscoveryEvent, type Endpoint } from '../src/index.js';
import { EventChannel, EndpointSet } from '../src/adapter.js';

const ep = (id: string, ready = true): Endpoint => ({ id, address: '127.0.0.1', port: 9042, ready, metadata: {} });

/** A source driven by whole views, as adapters drive theirs. */
function source() {
  const set = new EndpointSet();
  const channel = new EventChannel<DiscoveryEvent>(() => undefined);
  return {
    channel,
    snapshot(view: Endpoint[]) {
      set.replace(view);
      channel.push({ type: 'snapshot', endpoints: set.endpoints });
    },
    view(view: Endpoint[]) {
      for (const e of set.replace(view)) channel.push(e);
    },
  };
}

const collect = async (it: AsyncIterator<DiscoveryEvent>, n: number) => {
  const out: string[] = [];
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    const e = r.value;
    out.push('endpoint' in e ? `${e.type} ${e.endpoint.id}${e.endpoint.ready ? '' : ' (not ready)'}` : e.type);
  }
  return out;
};

describe('debounceDiscovery', () => {
  it('drops a flap inside the quiet period and passes the net change', async () => {
    const s = source();
    const out = debounceDiscovery(s.channel, { quietPeriod: 50, maxDelay: 1000, removalsImmediate: false })[Symbol.asyncIterator]();
    s.snapshot([ep('a')]);
    expect(await collect(out, 1)).toEqual(['snapshot']);
    s.view([ep('a'), ep('b')]);
    s.view([ep('a')]); // b flapped in and out
    s.view([ep('a', false)]);
    s.view([ep('a')]); // a flipped and back
    s.view([ep('a'), ep('c')]);
    expect(await collect(out, 1)).toEqual(['added c']);
    await out.return?.(undefined);
  });

  it('removals skip the wait by default', async () => {
    const s = source();
    const out = debounceDiscovery(s.channel, { quietPeriod: 60_000, maxDelay: 60_000 })[Symbol.asyncIterator]();
    s.snapshot([ep('a'), ep('b')]);
    await collect(out, 1);
    s.view([ep('a')]);
    expect(await collect(out, 1)).toEqual(['removed b']);
    await out.return?.(undefined);
  });

  it('constant churn cannot hold events back for longer than maxDelay', async () => {
    const s = source();
    const out = debounceDiscovery(s.channel, { quietPeriod: 40, maxDelay: 150, removalsImmediate: false })[Symbol.asyncIterator]();
    s.snapshot([]);
    await collect(out, 1);
    let n = 0;
    const churn = setInterval(() => s.view([ep('stable'), ep(`churn-${n++ % 2}`)]), 10);
    const first = await collect(out, 1);
    clearInterval(churn);
    expect(first[0]).toMatch(/^added /);
    await out.return?.(undefined);
  });

  it('a wall-clock step backwards while changes are held does not starve consumers (delays are monotonic)', async () => {
    const s = source();
    const out = debounceDiscovery(s.channel, { quietPeriod: 40, maxDelay: 150, removalsImmediate: false })[Symbol.asyncIterator]();
    s.snapshot([]);
    await collect(out, 1);
    const realNow = Date.now.bind(Date);
    let n = 0;
    let starved: () => void = () => undefined;
    const gaveUp = new Promise<string[]>((resolve) => (starved = () => resolve(['starved'])));
    const churn = setInterval(() => {
      s.view([ep('stable'), ep(`churn-${n++ % 2}`)]);
      // Step the wall clock back an hour once the first change is held (it was pushed 2 ticks ago).
      if (n === 3) jest.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000);
      if (n === 300) starved();
    }, 10);
    try {
      const first = await Promise.race([collect(out, 1), gaveUp]);
      expect(first[0]).toMatch(/^added /);
    } finally {
      clearInterval(churn);
      jest.restoreAllMocks();
      await out.return?.(undefined);
    }
  });
});
