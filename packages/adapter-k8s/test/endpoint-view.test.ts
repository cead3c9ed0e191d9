import { describe, expect, test } from '@jest/globals';
import { EndpointSet, type DiscoveryEvent, type Endpoint } from '@muster/core';
import { EndpointView } from '../src/endpoint-view.js';

const ep = (id: string, ready = true, port = 9042): Endpoint => ({ id, address: `10.0.0.${id.length}`, port, ready, metadata: {} });
const shape = (events: DiscoveryEvent[]) => events.map((e) => `${e.type}${'endpoint' in e ? `:${e.endpoint.id}` : ''}[${e.endpoints.map((x) => `${x.id}${x.ready ? '' : '-'}`).join(',')}]`);

describe('EndpointView', () => {
  test('seed takes a view without events; replace yields the same events as core\'s EndpointSet', () => {
    const view = new EndpointView();
    const set = new EndpointSet();
    const steps: Endpoint[][] = [
      [ep('b'), ep('a'), ep('c')],
      [ep('a'), ep('c', false), ep('d'), ep('bb')],
      [ep('d'), ep('bb', true, 1)],
      [ep('d'), ep('bb', true, 1)],
      [],
    ];
    view.seed(steps[0]!);
    set.replace(steps[0]!);
    expect(view.endpoints.map((e) => e.id)).toEqual(['a', 'b', 'c']);
    for (const step of steps.slice(1)) expect(shape(view.replace(step))).toEqual(shape(set.replace(step)));
  });

  test('an equal endpoint under a new reference is no event, and keeps the old reference', () => {
    const view = new EndpointView();
    const first = ep('a');
    view.seed([first]);
    expect(view.replace([{ ...first, metadata: {} }])).toEqual([]);
    expect(view.endpoints[0]).toBe(first);
  });

  test('10 000 endpoints: a first view and a one-endpoint change stay fast', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => ep(`pod-${String(i).padStart(5, '0')}`));
    const view = new EndpointView();
    const started = performance.now();
    view.seed(many);
    const changed = many.slice();
    changed[5000] = { ...changed[5000]!, ready: false };
    const events = view.replace(changed);
    expect(events.map((e) => e.type)).toEqual(['updated']);
    expect(events[0]!.endpoints).toHaveLength(10_000);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
