// One cold start: import Muster, create it from a config object or a YAML file, list once, close.
// argv[2]: "object" | "yaml"

const members = [
  { id: 'a', address: '127.0.0.1', port: 9042 },
  { id: 'b', address: '127.0.0.2', port: 9042 },
];
let input;
if (process.argv[2] === 'yaml') {
  // Written before the clock starts in run.mjs's terms: the file exists when a real process starts.
  input = process.env.MUSTER_BENCH_FILE;
} else {
  input = { discovery: { adapter: 'static', options: { members, self: 'a' } } };
}
const { createMuster } = await import('@muster/core');
const muster = await createMuster(input);
const endpoints = await muster.discovery.list('bench');
await muster.close();
if (endpoints.length !== 2) throw new Error('unexpected list result');
