// What the forwarded-body check (packages/cql-proxy/src/protocol/request-check.ts) costs per
// request: typical EXECUTE, QUERY and BATCH bodies checked in a loop, ns of CPU per call, median
// of several timed batches. Prints; never asserts. Run after `npx tsc -b`:
//   node bench/proxy/request-check.mjs
// Compare the figures with the proxy's whole CPU per request from run.mjs (tens of µs).
import { checkForwardedRequest } from '../../packages/cql-proxy/dist/protocol/request-check.js';
import { Opcode } from '../../packages/cql-proxy/dist/protocol/frame.js';
import { writeQueryParameters } from '../../packages/cql-proxy/dist/protocol/query-parameters.js';
import { Writer } from '../../packages/cql-proxy/dist/protocol/writer.js';

const ONE = 0x0001;
const int = (n) => Buffer.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
const text = (s) => Buffer.from(s, 'utf8');
const params = (values) => ({ consistency: ONE, values, skipMetadata: true, pageSize: 5000, timestamp: 1_700_000_000_000_000n });

function execute(version, values) {
  const w = new Writer();
  w.writeShortBytes(Buffer.alloc(16, 7)); // prepared id (an MD5)
  if (version >= 5) w.writeShortBytes(Buffer.alloc(16, 9)); // result metadata id
  writeQueryParameters(w, version, params(values));
  return w.finish();
}

function query(version, cql, values) {
  const w = new Writer();
  w.writeLongString(cql);
  writeQueryParameters(w, version, params(values));
  return w.finish();
}

function batch(version, statements) {
  const w = new Writer();
  w.writeByte(0); // LOGGED
  w.writeShort(statements);
  for (let i = 0; i < statements; i++) {
    w.writeByte(1);
    w.writeShortBytes(Buffer.alloc(16, i));
    w.writeShort(2);
    w.writeValue(int(i));
    w.writeValue(text(`value-${i}`.padEnd(60, 'x')));
  }
  w.writeConsistency(ONE);
  if (version >= 5) w.writeInt(0);
  else w.writeByte(0);
  return w.finish();
}

const cases = [
  ['EXECUTE v4, read: 1 int', Opcode.EXECUTE, 4, execute(4, [int(42)])],
  ['EXECUTE v4, write: int + 60-byte text', Opcode.EXECUTE, 4, execute(4, [int(42), text('v'.repeat(60))])],
  ['EXECUTE v5, write: int + 60-byte text', Opcode.EXECUTE, 5, execute(5, [int(42), text('v'.repeat(60))])],
  [
    'EXECUTE v4, 20 values',
    Opcode.EXECUTE,
    4,
    execute(
      4,
      Array.from({ length: 20 }, (_, i) => int(i)),
    ),
  ],
  ['QUERY v4, 80-char CQL, no values', Opcode.QUERY, 4, query(4, 'SELECT v FROM muster_bench.kv WHERE k = 42'.padEnd(80, ' '), undefined)],
  ['BATCH v4, 10 prepared statements', Opcode.BATCH, 4, batch(4, 10)],
];

const iterations = Number(process.env.ITERATIONS ?? 200_000);
const batches = Number(process.env.BATCHES ?? 7);
console.log(
  `bench/proxy/request-check: checkForwardedRequest, CPU time per call, ${iterations} calls per batch, median of ${batches} batches (Node ${process.version})`,
);
for (const [name, opcode, version, body] of cases) {
  for (let i = 0; i < 20_000; i++) checkForwardedRequest(opcode, body, version); // warm up (JIT)
  // CPU time of this process, not wall time: on a shared machine the wall clock also counts the
  // time other processes held the core.
  const perCall = [];
  for (let b = 0; b < batches; b++) {
    const start = process.cpuUsage();
    for (let i = 0; i < iterations; i++) checkForwardedRequest(opcode, body, version);
    const used = process.cpuUsage(start);
    perCall.push(((used.user + used.system) * 1000) / iterations);
  }
  perCall.sort((a, b) => a - b);
  const median = perCall[Math.floor(batches / 2)];
  console.log(
    `${name.padEnd(40)} ${String(body.length).padStart(5)} B  ${median.toFixed(0).padStart(5)} ns/call (min ${perCall[0].toFixed(0)} ns)`,
  );
}
