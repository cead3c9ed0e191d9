// The command line of bench/proxy/run.mjs: what to run, checked before anything starts.
import { parseArgs } from 'node:util';

export const usage = `Usage: node bench/proxy/run.mjs [options]

The same gocql load against Cassandra direct, the Muster proxy and datastax/cql-proxy, rounds interleaved.

  --nodes 1|3               testenv server: cassandra (1) or cassandra3 (3; keyspace RF 1)      [1]
  --mode saturation|rate|both                                                                   [both]
  --ops read,write          operations, each measured in a phase of its own                     [read,write]
  --targets direct,muster,cql-proxy[,direct-rr][,muster-base]                      [direct,muster,cql-proxy]
                            direct-rr: Cassandra with the driver's token awareness off;
                            muster-base: the proxy of the checkout --base names (A/B in one run)
  --base DIR                a built checkout (e.g. a git worktree of an older commit) for muster-base
  --concurrency N           requests in flight in saturation mode                               [32]
  --rate R|auto             requests per second in rate mode; auto: --headroom × the knee found
                            by a sweep of direct (the highest rate whose p99 stays near idle's)  [auto]
  --headroom F              auto rate as a fraction of the knee                                 [0.5]
  --seconds S               measured window per phase                                           [5]
  --samples N               rate mode: a window lasts at least N/R s, so the pooled p99 rests on
                            enough requests                                                     [5000]
  --warmup S                unmeasured load before each window                                  [1]
  --rounds N                rounds; throughput and CPU are the median over rounds, latency
                            percentiles are of all rounds' requests pooled                     [3]
  --keys N                  partitions read and written                                         [10000]
  --token-aware on|off      the driver's token awareness (matters for direct with --nodes 3)    [on]
  --seed N                  seed of the key sequences (default: random, printed; or BENCH_SEED)
  --pin split|spread|own|off
                            split: Cassandra on core 0, proxy and load generator on the last;
                            spread: Cassandra on every core, load generator on core 0, proxy on
                            the last; own: Cassandra and load generator on every core but the
                            last, the proxy alone on the last                                   [split]
  --no-pin                  the same as --pin off
  --nice=N                  run Cassandra, the proxies and the load generator at this nice (-20..19;
                            negative needs root): on a shared machine they then preempt other
                            work instead of waiting behind it                                   [0]
  --loop-delay              preload an event-loop delay and GC probe into the Muster proxy
                            (monitorEventLoopDelay, 1 ms resolution) and report it per phase
  --no-hop                  rate mode: skip measuring one loopback hop (a Go echo process)
  -h, --help`;

function choice(name, value, allowed) {
  if (!allowed.includes(value)) throw new Error(`--${name}: expected ${allowed.join(' | ')}, got ${JSON.stringify(value)}`);
  return value;
}

function list(name, value, allowed) {
  const items = value.split(',').map((s) => s.trim());
  for (const item of items) choice(name, item, allowed);
  return [...new Set(items)];
}

function number(name, value, { min, max = Infinity, integer = false }) {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    const range = max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new Error(`--${name}: expected ${integer ? 'an integer' : 'a number'} ${range}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** The measured window of a phase (s): at a fixed rate long enough for `samples` requests. */
export function windowSeconds(options, mode, rate = options.rate) {
  return mode === 'saturation' ? options.seconds : Math.max(options.seconds, (options.samples ?? 0) / rate);
}

/** Options from argv (process.argv.slice(2)); throws an Error naming the flag on bad input. */
export function parseBenchArgs(argv, env = process.env) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      nodes: { type: 'string', default: '1' },
      mode: { type: 'string', default: 'both' },
      ops: { type: 'string', default: 'read,write' },
      targets: { type: 'string', default: 'direct,muster,cql-proxy' },
      concurrency: { type: 'string', default: '32' },
      rate: { type: 'string', default: 'auto' },
      headroom: { type: 'string', default: '0.5' },
      seconds: { type: 'string', default: '5' },
      samples: { type: 'string', default: '5000' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      keys: { type: 'string', default: '10000' },
      'token-aware': { type: 'string', default: 'on' },
      seed: { type: 'string' },
      pin: { type: 'string', default: 'split' },
      'no-pin': { type: 'boolean', default: false },
      nice: { type: 'string', default: '0' },
      'loop-delay': { type: 'boolean', default: false },
      base: { type: 'string' },
      'no-hop': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const mode = choice('mode', values.mode, ['saturation', 'rate', 'both']);
  const nodes = Number(choice('nodes', values.nodes, ['1', '3']));
  const seedText = values.seed ?? env.BENCH_SEED;
  if (values.targets.split(',').includes('muster-base') && !values.base)
    throw new Error('--targets muster-base needs --base DIR (a built checkout)');
  return {
    help: values.help,
    nodes,
    modes: mode === 'both' ? ['saturation', 'rate'] : [mode],
    ops: list('ops', values.ops, ['read', 'write']),
    targets: list('targets', values.targets, ['direct', 'muster', 'cql-proxy', 'direct-rr', 'muster-base']),
    concurrency: number('concurrency', values.concurrency, { min: 1, integer: true }),
    // A fixed rate near the backend's saturation measures its queueing, not what a proxy adds: by
    // default the rate is found (knee.mjs), with headroom.
    rate: values.rate === 'auto' ? 'auto' : number('rate', values.rate, { min: 1 }),
    headroom: number('headroom', values.headroom, { min: 0.01, max: 1 }),
    seconds: number('seconds', values.seconds, { min: 0.1 }),
    samples: number('samples', values.samples, { min: 1, integer: true }),
    warmup: number('warmup', values.warmup, { min: 0 }),
    rounds: number('rounds', values.rounds, { min: 1, integer: true }),
    keys: number('keys', values.keys, { min: 1, integer: true }),
    tokenAware: choice('token-aware', values['token-aware'], ['on', 'off']) === 'on',
    seed: seedText === undefined ? Math.floor(Math.random() * 2 ** 31) : number('seed', seedText, { min: 0, integer: true }),
    pin: values['no-pin'] ? 'off' : choice('pin', values.pin, ['split', 'spread', 'own', 'off']),
    nice: number('nice', values.nice, { min: -20, max: 19, integer: true }),
    loopDelay: values['loop-delay'],
    base: values.base,
    hop: !values['no-hop'],
  };
}
