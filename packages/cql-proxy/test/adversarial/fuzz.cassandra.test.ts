// Seeded random fuzz of every decoder the proxy runs on client bytes (frames, v4 compression, v5
// segments, request bodies), against a proxy in its own process over the real Cassandra. The seed
// is printed; MUSTER_ADVERSARIAL_SEED=<n> replays a run, MUSTER_FUZZ_CASES sets its length.
// There is no oracle for a random frame's answer: what is checked is that the proxy stays up,
// only ever answers with response opcodes, a fresh driver works afterwards and memory is bounded.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { FrameFlag, Opcode } from '../../src/protocol/frame.js';
import { lz4 } from '../../src/protocol/compression.js';
import { encodeStartup } from '../../src/protocol/requests.js';
import { encodeSegments } from '../../src/protocol/segment.js';
import type { RawClient } from '../proxy/raw-client.js';
import { frame, seeded, statements, type Setup } from './cases.js';
import { adversarialBackend, ProxyProcess } from './proxy-process.js';
import { printTable, type ClassResult } from './report.js';
import { connection } from './runner.js';

const backend = adversarialBackend();
const seed = Number(process.env.MUSTER_ADVERSARIAL_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CASES = Number(process.env.MUSTER_FUZZ_CASES ?? 1500);
// A longer run (MUSTER_FUZZ_CASES) gets the time it needs: about 60 ms a case on a loaded machine.
const TIMEOUT = Math.max(180_000, CASES * 150);
const responses = new Set<number>([
  Opcode.ERROR,
  Opcode.READY,
  Opcode.AUTHENTICATE,
  Opcode.SUPPORTED,
  Opcode.RESULT,
  Opcode.EVENT,
  Opcode.AUTH_CHALLENGE,
  Opcode.AUTH_SUCCESS,
]);

const opcodes = [Opcode.QUERY, Opcode.QUERY, Opcode.PREPARE, Opcode.EXECUTE, Opcode.BATCH, Opcode.REGISTER, Opcode.OPTIONS];
const bodies = [
  statements.systemLocal,
  statements.forwarded,
  statements.prepare,
  statements.executeUnknown,
  statements.batch,
  statements.register,
  statements.options,
];

(backend ? describe : describe.skip)(`seeded fuzz (MUSTER_ADVERSARIAL_SEED=${seed})`, () => {
  let proxy: ProxyProcess;
  beforeAll(async () => {
    console.log(`fuzz seed ${seed} (replay with MUSTER_ADVERSARIAL_SEED=${seed})`);
    proxy = await ProxyProcess.start(backend!, '  connections: { handshakeTimeout: 3s, closeGrace: 300ms }');
  }, TIMEOUT);
  afterAll(() => proxy?.stop());

  it(
    `${CASES} mutated frames`,
    async () => {
      const random = seeded(seed);
      const rssBefore = proxy.rss();
      const fdsBefore = proxy.fds();
      const stats = { answered: 0, closed: 0, silent: 0, foreign: 0 };
      const open = new Map<Setup, RawClient>();
      for (let round = 0; round < CASES && !proxy.exited; round++) {
        const setup = (['none', 'startup', 'startup', 'lz4', 'v5'] as const)[random.int(5)]!;
        const version = setup === 'v5' ? 5 : 4;
        const pick = random.int(opcodes.length + 1);
        const opcode = pick === opcodes.length ? Opcode.STARTUP : opcodes[pick]!;
        let body = pick === opcodes.length ? encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }) : bodies[pick]!;
        let flags = random.int(4) === 0 ? random.int(256) : 0;
        if (setup === 'lz4' && random.int(2) === 0) {
          body = lz4.compress(body);
          flags |= FrameFlag.COMPRESSION;
        }
        let bytes = frame(version, flags, 1 + random.int(100), opcode, body);
        switch (random.int(6)) {
          case 0: // flip bytes
            bytes = Buffer.from(bytes);
            for (let i = 1 + random.int(4); i > 0; i--) bytes[random.int(bytes.length)] = random.int(256);
            break;
          case 1: // truncate
            bytes = bytes.subarray(0, random.int(bytes.length));
            break;
          case 2: // random bytes
            bytes = random.bytes(1 + random.int(64));
            break;
          case 3: // lie about the body length
            bytes = Buffer.from(bytes);
            bytes.writeInt32BE(random.int(2) ? random.int(bytes.length * 2) : random.int(2 ** 31) * (random.int(2) ? 1 : -1), 5);
            break;
          case 4: // a good frame followed by garbage
            bytes = Buffer.concat([bytes, random.bytes(random.int(32))]);
            break;
          default: // the frame as it is (with random flags a quarter of the time)
        }
        let client = open.get(setup);
        if (!client || client.closed) {
          client = await connection(proxy, setup).catch(() => undefined);
          if (!client) continue;
          open.set(setup, client);
        }
        if (setup === 'v5') for (const piece of encodeSegments([bytes])) client.socket.write(piece);
        else client.socket.write(bytes);
        const reply = await client.next(undefined, 150).catch(() => 'silent' as const);
        if (reply === 'silent') {
          // Most likely an incomplete frame: this connection waits for bytes that never come.
          stats.silent++;
          client.close();
          open.delete(setup);
        } else if (reply === undefined) stats.closed++;
        else {
          stats.answered++;
          if (!responses.has(reply.opcode)) stats.foreign++;
        }
      }
      for (const c of open.values()) c.close();
      const freshClient = proxy.exited ? false : await proxy.works();
      const result: ClassResult = {
        name: `fuzz, seed ${seed}`,
        cases: CASES,
        crashes: proxy.exited ? 1 : 0,
        wrong: stats.foreign,
        rssBefore,
        rssAfter: proxy.exited ? NaN : proxy.rss(),
        peakRss: proxy.exited ? NaN : proxy.peakRss(),
        freshClient,
        note: `answered ${stats.answered}, closed ${stats.closed}, silent ${stats.silent}; fds ${proxy.exited ? '-' : proxy.fds()} (before ${fdsBefore})`,
      };
      printTable('Fuzz', [result]);
      expect(result.crashes).toBe(0);
      expect(stats.foreign).toBe(0);
      expect(freshClient).toBe(true);
      expect(result.peakRss - rssBefore).toBeLessThan(150);
    },
    TIMEOUT,
  );
});
