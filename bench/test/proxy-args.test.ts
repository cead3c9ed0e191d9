// bench/proxy is a script, not part of npm test; this checks only that its command line and its
// arithmetic (ratios, added latency, medians) are right, so a broken flag fails here and not
// after minutes of load. No server, no process started.
import { describe, expect, it, jest } from '@jest/globals';
import { parseBenchArgs } from '../proxy/args.mjs';
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
    expect(o).toMatchObject({ concurrency: 32, rate: 2000, seconds: 5, rounds: 2, tokenAware: true, pin: true });
    expect(Number.isInteger(o.seed)).toBe(true);
  });

  it('lowers the default fixed rate for three nodes, keeps an explicit one', () => {
    expect(parseBenchArgs(['--nodes', '3'], {}).rate).toBe(1000);
    expect(parseBenchArgs(['--nodes', '3', '--rate', '1500'], {}).rate).toBe(1500);
  });

  it('takes the seed from --seed, else BENCH_SEED, so a run replays', () => {
    expect(parseBenchArgs(['--seed', '7'], { BENCH_SEED: '9' }).seed).toBe(7);
    expect(parseBenchArgs([], { BENCH_SEED: '9' }).seed).toBe(9);
  });

  it('reads lists, modes and switches', () => {
    const o = parseBenchArgs(['--mode', 'rate', '--ops', 'write', '--targets', 'muster,direct-rr', '--token-aware', 'off', '--no-pin'], {});
    expect(o).toMatchObject({ modes: ['rate'], ops: ['write'], targets: ['muster', 'direct-rr'], tokenAware: false, pin: false });
  });

  it.each([
    [['--nodes', '2'], '--nodes: expected 1 | 3, got "2"'],
    [['--mode', 'fast'], '--mode: expected saturation | rate | both'],
    [['--targets', 'direct,zdm'], '--targets: expected direct | muster | cql-proxy | direct-rr, got "zdm"'],
    [['--concurrency', '0'], '--concurrency: expected an integer ≥ 1, got "0"'],
    [['--seconds', 'ten'], '--seconds: expected a number ≥ 0.1'],
    [['--token-aware', 'yes'], '--token-aware: expected on | off'],
    [['--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => parseBenchArgs(argv, {})).toThrow(message);
  });

  it('builds the datastax/cql-proxy version the wrapper go.mod pins', () => {
    expect(datastaxCqlProxyVersion()).toBe('v0.2.0');
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
