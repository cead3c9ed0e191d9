// bench/proxy is a script, not part of npm test; this checks only that its command line and its
// arithmetic (ratios, added latency, medians) are right, so a broken flag fails here and not
// after minutes of load. No server, no process started.
import { describe, expect, it, jest } from '@jest/globals';
import { parseBenchArgs, windowSeconds } from '../proxy/args.mjs';
import { findKnee, kneeOf, rateBelowKnee, sweepRates } from '../proxy/knee.mjs';
import { mergeHistograms, quantileMs } from '../proxy/latency.mjs';
import { planPinning } from '../proxy/pinning.mjs';
import { replicaShare, routedExecutes } from '../proxy/routing.mjs';
import { nicedCommand } from '../proxy/priority.mjs';
import { printReport } from '../proxy/report.mjs';
import { datastaxCqlProxyVersion } from '../proxy/tools.mjs';

describe('bench/proxy command line', () => {
  it('defaults to one node, both modes, reads and writes, the three targets', () => {
    const o = parseBenchArgs([], {});
    expect(o).toMatchObject({
      nodes: 1,
      modes: ['saturation', 'rate'],
      ops: ['read', 'write'],
      targets: ['direct', 'muster', 'cql-proxy'],
    });
    expect(o).toMatchObject({ concurrency: 32, rate: 'auto', headroom: 0.5, seconds: 5, samples: 5000, rounds: 3, tokenAware: true });
    expect(o).toMatchObject({ pin: 'split', nice: 0, loopDelay: false, hop: true });
    expect(Number.isInteger(o.seed)).toBe(true);
  });

  it('finds the fixed rate below the knee by default, keeps an explicit one', () => {
    expect(parseBenchArgs(['--nodes', '3'], {}).rate).toBe('auto');
    expect(parseBenchArgs(['--nodes', '3', '--rate', '1500'], {}).rate).toBe(1500);
    expect(parseBenchArgs(['--headroom', '0.4'], {}).headroom).toBe(0.4);
  });

  it('makes a fixed-rate window long enough for --samples requests, a saturation window --seconds long', () => {
    const o = parseBenchArgs(['--seconds', '5', '--samples', '6000'], {});
    expect(windowSeconds({ ...o, rate: 400 }, 'rate')).toBe(15);
    expect(windowSeconds({ ...o, rate: 400 }, 'hop')).toBe(15);
    expect(windowSeconds({ ...o, rate: 4000 }, 'rate')).toBe(5);
    expect(windowSeconds({ ...o, rate: 400 }, 'saturation')).toBe(5);
  });

  it('reads the pinning layout, the priority and the probes', () => {
    expect(parseBenchArgs(['--pin', 'spread'], {}).pin).toBe('spread');
    expect(parseBenchArgs(['--no-pin'], {}).pin).toBe('off');
    expect(parseBenchArgs(['--nice=-10', '--loop-delay', '--no-hop'], {})).toMatchObject({ nice: -10, loopDelay: true, hop: false });
  });

  it('takes the seed from --seed, else BENCH_SEED, so a run replays', () => {
    expect(parseBenchArgs(['--seed', '7'], { BENCH_SEED: '9' }).seed).toBe(7);
    expect(parseBenchArgs([], { BENCH_SEED: '9' }).seed).toBe(9);
  });

  it('reads lists, modes and switches', () => {
    const o = parseBenchArgs(['--mode', 'rate', '--ops', 'write', '--targets', 'muster,direct-rr', '--token-aware', 'off', '--no-pin'], {});
    expect(o).toMatchObject({ modes: ['rate'], ops: ['write'], targets: ['muster', 'direct-rr'], tokenAware: false, pin: 'off' });
  });

  it.each([
    [['--nodes', '2'], '--nodes: expected 1 | 3, got "2"'],
    [['--mode', 'fast'], '--mode: expected saturation | rate | both'],
    [['--targets', 'direct,zdm'], '--targets: expected direct | muster | cql-proxy | direct-rr | muster-base, got "zdm"'],
    [['--targets', 'muster,muster-base'], '--targets muster-base needs --base DIR'],
    [['--concurrency', '0'], '--concurrency: expected an integer ≥ 1, got "0"'],
    [['--seconds', 'ten'], '--seconds: expected a number ≥ 0.1'],
    [['--token-aware', 'yes'], '--token-aware: expected on | off'],
    [['--rate', 'fast'], '--rate: expected a number ≥ 1, got "fast"'],
    [['--headroom', '1.5'], '--headroom: expected a number from 0.01 to 1, got "1.5"'],
    [['--pin', 'both'], '--pin: expected split | spread | own | off, got "both"'],
    [['--nice=-30'], '--nice: expected an integer from -20 to 19, got "-30"'],
    [['--samples', '0'], '--samples: expected an integer ≥ 1'],
    [['--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => parseBenchArgs(argv, {})).toThrow(message);
  });

  it('builds the datastax/cql-proxy version the wrapper go.mod pins', () => {
    expect(datastaxCqlProxyVersion()).toBe('v0.2.0');
  });
});

describe('bench/proxy pinning and priority', () => {
  it('plans the split layout: Cassandra on core 0, proxy and load generator on the last', () => {
    expect(planPinning('split', { cores: 2, hasTaskset: () => true })).toMatchObject({ backend: '0', load: '1', proxy: '1' });
    expect(planPinning('split', { cores: 4, hasTaskset: () => true })).toMatchObject({ backend: '0-2', load: '3', proxy: '3' });
  });

  it('plans the own layout: the proxy alone on the last core, Cassandra and the load generator before it', () => {
    const plan = planPinning('own', { cores: 2, hasTaskset: () => true });
    expect(plan).toMatchObject({ backend: '0', load: '0', proxy: '1' });
    expect(plan.why).toBe('own: Cassandra and load generator on core 0, proxy alone on core 1');
    expect(planPinning('own', { cores: 4, hasTaskset: () => true })).toMatchObject({ backend: '0-2', load: '0-2', proxy: '3' });
  });

  it('plans the spread layout: Cassandra on every core, load generator and proxy apart', () => {
    const plan = planPinning('spread', { cores: 2, hasTaskset: () => true });
    expect(plan).toMatchObject({ backend: '0-1', load: '0', proxy: '1' });
    expect(plan.why).toBe('spread: Cassandra on cores 0-1, load generator on core 0, proxy on core 1');
  });

  it('plans nothing, and says why, when off, on one core or without taskset', () => {
    expect(planPinning('off', { cores: 2, hasTaskset: () => true })).toMatchObject({ backend: undefined, why: 'off (--pin off)' });
    expect(planPinning('split', { cores: 1, hasTaskset: () => true }).why).toBe('off (1 core)');
    expect(planPinning('spread', { cores: 2, hasTaskset: () => false }).why).toBe('off (no taskset)');
  });

  it('starts processes under nice only when asked', () => {
    expect(nicedCommand(['node', 'x'], 0)).toEqual(['node', 'x']);
    expect(nicedCommand(['node', 'x'], -10)).toEqual(['nice', '-n', '-10', 'node', 'x']);
  });
});

describe('bench/proxy fixed rate below the knee', () => {
  const step = (rate: number, p99: number, opsPerSec = rate, errors = 0) => ({ rate, p99, opsPerSec, errors });

  it('sweeps rates rising by half each step', () => {
    expect(sweepRates({ from: 200, factor: 1.5, to: 1000 })).toEqual([200, 300, 450, 675]);
  });

  it('takes the last rate whose p99 stays within 2 × idle + 1 ms and whose requests all completed', () => {
    expect(kneeOf([step(200, 1), step(300, 2.9), step(450, 3.1)])).toBe(300);
    expect(kneeOf([step(200, 1), step(300, 1.2, 280)])).toBe(200);
    expect(kneeOf([step(200, 1), step(300, 1.2, 300, 1)])).toBe(200);
    expect(kneeOf([step(200, 1), step(300, 1), step(450, 1)])).toBe(450);
  });

  it('measures the idle p99 by the quietest step so far, not by a first step that paid for warm-up', () => {
    // The sweep of 3 December 2026: 200 req/s at p99 23.5 ms (JVMs warming up), 450 at 11.3 ms.
    const sweep = [
      step(200, 23.5),
      step(300, 17.4),
      step(450, 11.3),
      step(675, 14.1),
      step(1013, 12.1),
      step(1520, 21.6),
      step(2280, 37.4),
    ];
    expect(kneeOf(sweep)).toBe(1520);
  });

  it('stops the sweep at the first step above the knee', async () => {
    const measured: number[] = [];
    const p99 = new Map([
      [200, 1],
      [300, 1.5],
      [450, 9],
      [675, 1],
    ]);
    const { steps, knee } = await findKnee(async (rate: number) => (measured.push(rate), step(rate, p99.get(rate)!)), [200, 300, 450, 675]);
    expect(measured).toEqual([200, 300, 450]);
    expect(steps).toHaveLength(3);
    expect(knee).toBe(300);
  });

  it('runs at the headroom fraction of the knee, in tens', () => {
    expect(rateBelowKnee(1013, 0.5)).toBe(510);
    expect(rateBelowKnee(10, 0.5)).toBe(10);
  });
});

describe('bench/proxy pooled latency', () => {
  it("merges the rounds' histograms and reads percentiles of the whole", () => {
    // Round 1: 98 requests at 100 µs, 2 at 5 ms; round 2: 100 at 200 µs. Pooled, the p99 (index
    // 198 of 200) is 5 ms, where the median of the rounds' own p99s would say 2.6 ms.
    const pooled = mergeHistograms([
      [
        [100, 98],
        [5000, 2],
      ],
      [[200, 100]],
    ]);
    expect(pooled).toEqual([
      [100, 98],
      [200, 100],
      [5000, 2],
    ]);
    expect(quantileMs(pooled, 0.5)).toBe(0.2);
    expect(quantileMs(pooled, 0.99)).toBe(5);
    expect(quantileMs(pooled, 0.98)).toBe(0.2);
    expect(quantileMs([], 0.99)).toBeUndefined();
  });
});

describe('bench/proxy routed share', () => {
  it("reads the proxy's routed-EXECUTE counter and the share of a window sent to a replica", () => {
    const text = [
      '# TYPE muster_proxy_routed_executes_total counter',
      'muster_proxy_routed_executes_total{path="replica"} 1000',
      'muster_proxy_routed_executes_total{path="ordinary"} 12',
      'muster_proxy_errors_total{kind="backend"} 3',
    ].join('\n');
    const before = routedExecutes(text);
    expect(before).toEqual({ replica: 1000, ordinary: 12 });
    expect(replicaShare(before, { replica: 1990, ordinary: 22 })).toBe(0.99);
    expect(replicaShare(before, before)).toBeUndefined();
    expect(replicaShare(undefined, before)).toBeUndefined();
  });
});

describe('bench/proxy report', () => {
  const phase = (target: string, opsPerSec: number, p50: number, p99: number, cpuProxy?: number) => ({
    target,
    mode: 'saturation',
    op: 'read',
    opsPerSec,
    p50,
    p99,
    p999: p99,
    errors: 0,
    errorSamples: [],
    late: 0,
    cpuProxy,
    cpuCassandra: 100,
    cpuLoad: 20,
    rssMiB: cpuProxy === undefined ? undefined : 60,
    anonMiB: cpuProxy === undefined ? undefined : 20,
    peakMiB: cpuProxy === undefined ? undefined : 61,
    clientConns: cpuProxy === undefined ? undefined : 3,
    backendConns: cpuProxy === undefined ? undefined : 4,
  });

  it('prints the median over rounds, the ratio to direct and the added latency', () => {
    const lines: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    try {
      printReport(
        [
          phase('direct', 1000, 1, 2),
          phase('direct', 3000, 3, 4),
          phase('muster', 1800, 2.5, 3.5, 30),
          phase('muster', 1800, 2.5, 3.5, 30),
        ],
        {
          modes: ['saturation'],
          ops: ['read'],
          targets: ['direct', 'muster'],
          options: { concurrency: 32, rate: 2000, rounds: 2, seconds: 5 },
        },
      );
    } finally {
      log.mockRestore();
    }
    const direct = lines.find((l) => l.startsWith('direct'))!;
    const muster = lines.find((l) => l.startsWith('muster'))!;
    expect(direct.split(/\s+/).slice(1, 4)).toEqual(['2000', '1.000', '2.000']);
    expect(muster.split(/\s+/).slice(1, 8)).toEqual(['1800', '0.900', '2.500', '3.500', '3.500', '+0.500', '+0.500']);
    expect(muster).toContain('4/3');
    expect(muster).toContain('60 (20, 61)');
  });

  it('keeps figures wider than their column apart (seconds-long latencies of an overloaded run)', () => {
    const lines: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    try {
      printReport([phase('direct', 244, 4938.787, 12962.536)], {
        modes: ['saturation'],
        ops: ['read'],
        targets: ['direct'],
        options: { concurrency: 32, rate: 2000, rounds: 1, seconds: 5 },
      });
    } finally {
      log.mockRestore();
    }
    expect(
      lines
        .find((l) => l.startsWith('direct'))!
        .split(/\s+/)
        .slice(3, 6),
    ).toEqual(['4938.787', '12962.536', '12962.536']);
  });

  it('keeps the run when a phase failed, and says which', () => {
    const lines: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    try {
      printReport(
        [
          phase('direct', 1000, 1, 2),
          phase('muster', 900, 1, 2, 30),
          { target: 'muster', mode: 'saturation', op: 'read', failed: 'EOF' },
          { target: 'cql-proxy', mode: 'saturation', op: 'read', failed: 'refused' },
        ],
        {
          modes: ['saturation'],
          ops: ['read'],
          targets: ['direct', 'muster', 'cql-proxy'],
          options: { concurrency: 32, rate: 2000, rounds: 2, seconds: 5 },
        },
      );
    } finally {
      log.mockRestore();
    }
    expect(lines.find((l) => l.startsWith('muster'))).toContain('1 round(s) failed');
    expect(lines.find((l) => l.startsWith('cql-proxy'))).toBe('cql-proxy  every round failed: refused');
  });
});

describe('bench/proxy report at a fixed rate', () => {
  const rated = (target: string, histogram: [number, number][], extra: object = {}) => ({
    target,
    mode: 'rate',
    op: 'read',
    opsPerSec: 500,
    p50: 99,
    p99: 99,
    p999: 99,
    errors: 0,
    errorSamples: [],
    late: 0,
    maxLate: 0,
    cpuCassandra: 300,
    cpuLoad: 20,
    histogram,
    loadAverage: 2,
    ...extra,
  });

  it('reads percentiles from the rounds pooled, adds +p999, the late requests, the hop, the event loop and the load', () => {
    const lines: string[] = [];
    const log = jest.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line));
    try {
      printReport(
        [
          rated('direct', [[1000, 100]]),
          rated('direct', [[1000, 100]], { loadAverage: 4 }),
          rated('muster', [
            [1100, 99],
            [3000, 1],
          ]),
          rated(
            'muster',
            [
              [1200, 99],
              [4000, 1],
            ],
            {
              late: 3,
              maxLate: 2.5,
              routedShare: 0.995,
              loopDelay: { p50: 0.01, p99: 0.2, p999: 0.9, max: 1.5 },
              gc: { count: 4, ms: 3, maxMs: 1.1 },
            },
          ),
          rated('hop', [[50, 200]], { mode: 'hop' }),
        ],
        {
          modes: ['rate'],
          ops: ['read'],
          targets: ['direct', 'muster'],
          options: { concurrency: 32, rate: 500, rounds: 2, seconds: 5 },
        },
      );
    } finally {
      log.mockRestore();
    }
    expect(lines[0]).toContain('500 req/s');
    expect(lines[0]).toContain('percentiles of 200+ requests pooled per target; load average 2.0 (max 4.0)');
    const muster = lines.find((l) => l.startsWith('muster'))!;
    // Pooled: 99 at 1.1 ms, 99 at 1.2 ms, 3 and 4 ms: p50 1.2, p99 (index 198) 3, p999 (index 199) 4.
    expect(muster.split(/\s+/).slice(3, 9)).toEqual(['1.200', '3.000', '4.000', '+0.200', '+2.000', '+3.000']);
    expect(muster).toContain('3 sent >1 ms late, at most 2.5 ms');
    expect(muster).toContain('99.5 % of EXECUTEs to a replica');
    // The rounds' own p99s (99 here, as the generator reported them) show the noise.
    expect(lines.find((l) => l.startsWith('direct'))).toContain('; p99 of the rounds 99.0–99.0 ms');
    expect(lines.find((l) => l.includes('event loop late'))).toContain('p50 0.010 / p99 0.200 / p999 0.900 / max 1.500 ms; GC 4 pauses');
    const hop = lines.find((l) => l.startsWith('1 hop'))!;
    expect(hop.split(/\s+/).slice(2, 6)).toEqual(['500', '-', '0.050', '0.050']);
  });
});
