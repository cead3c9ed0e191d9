// Malformed frames by class against a proxy in its own process over the real Cassandra: every bad
// frame gets the answer the protocol owes it (PROTOCOL_ERROR, or a close for a frame that never
// completes), the proxy stays up, a fresh driver works after each class, and memory stays bounded
// (a 255 MiB LZ4 bomb is refused unread; 16 MiB ones expand and are freed).
// MUSTER_ADVERSARIAL_SEED replays the random parts (printed below).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  compressed,
  flagsTimesStatements,
  lengths,
  lyingBodies,
  opcodesAfterStartup,
  opcodesBeforeStartup,
  registers,
  truncatedHeaders,
  v5Segments,
  versionByte,
  type Case,
} from './cases.js';
import { adversarialBackend, ProxyProcess } from './proxy-process.js';
import { printTable, type ClassResult } from './report.js';
import { runClass } from './runner.js';

const backend = adversarialBackend();
const TIMEOUT = 180_000;
const seed = Number(process.env.MUSTER_ADVERSARIAL_SEED ?? 20261203);
/** Above the proxy's RSS at the start of the file: what any class may add at its peak. */
const PEAK_BOUND_MIB = 150;

const classes: [string, () => Case[]][] = [
  ['version byte', versionByte],
  ['opcode before STARTUP', opcodesBeforeStartup],
  ['opcode after STARTUP', opcodesAfterStartup],
  ['lengths', lengths],
  ['truncated headers', truncatedHeaders],
  ['flags × statements', flagsTimesStatements],
  ['LZ4 corrupt and bombs', () => compressed('lz4', seed)],
  ['Snappy corrupt and bombs', () => compressed('snappy', seed + 1)],
  ['v5 segments (CRC, flags, lengths)', v5Segments],
  ['bodies with lying lengths (never forwarded)', lyingBodies],
  ['REGISTER with unknown event types (1 MiB floods)', () => registers(seed + 2)],
];

(backend ? describe : describe.skip)(`malformed frames by class (seed ${seed})`, () => {
  let proxy: ProxyProcess;
  let startRss: number;
  const results: ClassResult[] = [];
  beforeAll(async () => {
    proxy = await ProxyProcess.start(backend!);
    startRss = proxy.rss();
  }, TIMEOUT);
  afterAll(() => {
    printTable(
      `Malformed frames (seed ${seed}; proxy RSS at start ${startRss?.toFixed(0)} MiB, peak bound +${PEAK_BOUND_MIB} MiB)`,
      results,
    );
    proxy?.stop();
  });

  for (const [name, cases] of classes) {
    it(
      name,
      async () => {
        const result = await runClass(proxy, name, cases());
        results.push(result);
        expect(result.failures).toEqual([]);
        expect(result.crashes).toBe(0);
        expect(result.freshClient).toBe(true);
        expect(result.peakRss - startRss).toBeLessThan(PEAK_BOUND_MIB);
      },
      TIMEOUT,
    );
  }
});
