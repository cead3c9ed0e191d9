import { describe, expect, test } from '@jest/globals';
import { endpointsFromSlices, type EndpointSliceObject, type SliceEndpoint } from '../src/endpoint-slices.js';

const slice = (
  name: string,
  endpoints: SliceEndpoint[],
  ports: EndpointSliceObject['ports'] = [{ name: 'cql', port: 9042 }],
  addressType = 'IPv4',
): EndpointSliceObject => ({
  metadata: { name, labels: { 'kubernetes.io/service-name': 'svc' } },
  addressType,
  endpoints,
  ports,
});
const pod = (
  name: string,
  address: string | string[],
  conditions?: SliceEndpoint['conditions'],
  extra: Partial<SliceEndpoint> = {},
): SliceEndpoint => ({
  addresses: Array.isArray(address) ? address : [address],
  ...(conditions !== undefined ? { conditions } : {}),
  targetRef: { kind: 'Pod', name },
  ...extra,
});

describe('endpointsFromSlices', () => {
  test('merges every slice of the service, sorted by id, with the pod name as id', () => {
    const eps = endpointsFromSlices([slice('b', [pod('p-2', '10.0.0.2')]), slice('a', [pod('p-1', '10.0.0.1'), pod('p-3', '10.0.0.3')])]);
    expect(eps.map((e) => [e.id, e.address, e.port])).toEqual([
      ['p-1', '10.0.0.1', 9042],
      ['p-2', '10.0.0.2', 9042],
      ['p-3', '10.0.0.3', 9042],
    ]);
    expect(eps[0]!.ports).toEqual({ cql: 9042 });
  });

  test('an endpoint in two slices (a move) appears once; deleting one slice keeps it', () => {
    const moving = pod('p-1', '10.0.0.1', { ready: true });
    const both = endpointsFromSlices([slice('old', [moving]), slice('new', [moving, pod('p-2', '10.0.0.2')])]);
    expect(both.map((e) => e.id)).toEqual(['p-1', 'p-2']);
    const afterDelete = endpointsFromSlices([slice('new', [moving, pod('p-2', '10.0.0.2')])]);
    expect(afterDelete.map((e) => e.id)).toEqual(['p-1', 'p-2']);
  });

  test('of two copies of one address, the ready one wins whichever slice it is in', () => {
    const eps = endpointsFromSlices([
      slice('a', [pod('p-1', '10.0.0.1', { ready: false })]),
      slice('b', [pod('p-1', '10.0.0.1', { ready: true })]),
    ]);
    expect(eps).toHaveLength(1);
    expect(eps[0]!.ready).toBe(true);
  });

  test('readiness per the API: missing ready is ready, missing serving follows ready, missing terminating is false', () => {
    const eps = endpointsFromSlices([
      slice('a', [
        pod('none', '10.0.0.1'),
        pod('empty', '10.0.0.2', {}),
        pod('nulls', '10.0.0.3', { ready: null, serving: null, terminating: null }),
        pod('unready', '10.0.0.4', { ready: false }),
        pod('draining', '10.0.0.5', { ready: false, serving: true, terminating: true }),
        pod('gone', '10.0.0.6', { ready: false, serving: false, terminating: true }),
      ]),
    ]);
    const by = Object.fromEntries(eps.map((e) => [e.id, [e.ready, e.serving, e.terminating]]));
    expect(by).toEqual({
      none: [true, true, false],
      empty: [true, true, false],
      nulls: [true, true, false],
      unready: [false, false, false],
      draining: [false, true, true],
      gone: [false, false, true],
    });
  });

  test('every address is reported; a pod with several gets pod/address ids', () => {
    const eps = endpointsFromSlices([
      slice('v4', [pod('dual', '10.0.0.1')]),
      slice('v6', [pod('dual', 'fd00::1')], [{ name: 'cql', port: 9042 }], 'IPv6'),
      slice('multi', [{ addresses: ['10.0.0.7', '10.0.0.8'] }]),
    ]);
    expect(eps.map((e) => e.id)).toEqual(['10.0.0.7', '10.0.0.8', 'dual/10.0.0.1', 'dual/fd00::1']);
    expect(eps.find((e) => e.address === 'fd00::1')!.metadata).toEqual({ addressType: 'IPv6', pod: 'dual' });
  });

  test('named port selection; a slice without that port is left out', () => {
    const slices = [
      slice(
        'a',
        [pod('p-1', '10.0.0.1')],
        [
          { name: 'cql', port: 9042 },
          { name: 'metrics', port: 9100 },
        ],
      ),
      slice('b', [pod('p-2', '10.0.0.2')], [{ name: 'metrics', port: 9100 }]),
    ];
    expect(endpointsFromSlices(slices, { port: 'cql' }).map((e) => [e.id, e.port])).toEqual([['p-1', 9042]]);
    expect(endpointsFromSlices(slices, { port: 'metrics' }).map((e) => [e.id, e.port])).toEqual([
      ['p-1', 9100],
      ['p-2', 9100],
    ]);
    // Without a name: the only port, else the unnamed one, else the first by name.
    expect(endpointsFromSlices(slices).map((e) => e.port)).toEqual([9042, 9100]);
    expect(endpointsFromSlices([slice('c', [pod('p', '10.0.0.3')], [{ name: 'x', port: 2 }, { port: 1 }])])[0]!.port).toBe(1);
  });

  test('zone, nodeName and hostname pass through; missing fields never crash', () => {
    const eps = endpointsFromSlices([
      slice('a', [pod('p-1', '10.0.0.1', undefined, { zone: 'eu-1a', nodeName: 'node-7', hostname: 'p-1' })]),
      slice('empty', []),
      { metadata: { name: 'bare' } },
      slice('noaddr', [{ addresses: null, conditions: null, targetRef: null }]),
      slice('noports', [pod('x', '10.0.0.9')], null),
    ]);
    expect(eps).toHaveLength(1);
    expect(eps[0]).toMatchObject({ id: 'p-1', zone: 'eu-1a', nodeName: 'node-7', metadata: { hostname: 'p-1', pod: 'p-1' } });
  });
});
