// The command line of bench/proxy/run.mjs: what to run, checked before anything starts.
import { parseArgs } from 'node:util';

export const usage = `Usage: node bench/proxy/run.mjs [options]

The same gocql load against Cassandra direct, the Muster proxy and datastax/cql-proxy, rounds interleaved.

  --nodes 1|3               testenv server: cassandra (1) or cassandra3 (3; keyspace RF 1)      [1]
  --mode saturation|rate|both                                                                   [both]
  --ops read,write          operations, each measured in a phase of its own                     [read,write]
  --targets direct,muster,cql-proxy[,direct-rr]                                    [direct,muster,cql-proxy]
                            direct-rr: Cassandra with the driver's token awareness off
  --concurrency N           requests in flight in saturation mode                               [32]
  --rate R                  requests per second in rate mode                  [2000; 1000 with --nodes 3]
  --seconds S               measured window per phase                                           [5]
  --warmup S                unmeasured load before each window                                  [1]
  --rounds N                rounds; figures are the median over rounds                          [2]
  --keys N                  partitions read and written                                         [10000]
  --token-aware on|off      the driver's token awareness (matters for direct with --nodes 3)    [on]
  --seed N                  seed of the key sequences (default: random, printed; or BENCH_SEED)
  --no-pin                  do not pin processes to cores with taskset
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

function number(name, value, { min, integer = false }) {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) {
    throw new Error(`--${name}: expected ${integer ? 'an integer' : 'a number'} ≥ ${min}, got ${JSON.stringify(value)}`);
  }
  return n;
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
      rate: { type: 'string' },
      seconds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '2' },
      keys: { type: 'string', default: '10000' },
      'token-aware': { type: 'string', default: 'on' },
      seed: { type: 'string' },
      'no-pin': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const mode = choice('mode', values.mode, ['saturation', 'rate', 'both']);
  const nodes = Number(choice('nodes', values.nodes, ['1', '3']));
  const seedText = values.seed ?? env.BENCH_SEED;
  return {
    help: values.help,
    nodes,
    modes: mode === 'both' ? ['saturation', 'rate'] : [mode],
    ops: list('ops', values.ops, ['read', 'write']),
    targets: list('targets', values.targets, ['direct', 'muster', 'cql-proxy', 'direct-rr']),
    concurrency: number('concurrency', values.concurrency, { min: 1, integer: true }),
    // Three Cassandra JVMs on one core saturate near 2,000 req/s: the fixed rate must stay below.
    rate: number('rate', values.rate ?? (nodes === 3 ? '1000' : '2000'), { min: 1 }),
    seconds: number('seconds', values.seconds, { min: 0.1 }),
    warmup: number('warmup', values.warmup, { min: 0 }),
    rounds: number('rounds', values.rounds, { min: 1, integer: true }),
    keys: number('keys', values.keys, { min: 1, integer: true }),
    tokenAware: choice('token-aware', values['token-aware'], ['on', 'off']) === 'on',
    seed: seedText === undefined ? Math.floor(Math.random() * 2 ** 31) : number('seed', seedText, { min: 0, integer: true }),
    pin: !values['no-pin'],
  };
}
