// One client bursting small invalid frames must not hold the others: libuv reads a readable socket
// up to 32 times in one go (2 MiB in 64 KiB reads), and answering 2 MiB of 9-byte frames on an lz4
// connection (an lz4-compressed ERROR each) took seconds, during which no other client was served:
// with 4 MiB of frames of an unknown opcode, another client's OPTIONS waited 4.8 s. A proxy in its
// own process over the real Cassandra.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Opcode } from '../../src/protocol/frame.js';
import { frame } from './cases.js';
import { adversarialBackend, ProxyProcess } from './proxy-process.js';
import { connection } from './runner.js';

const backend = adversarialBackend();
const MiB = 1024 * 1024;

(backend ? describe : describe.skip)('fairness under a burst of invalid frames', () => {
  let proxy: ProxyProcess;
  beforeAll(async () => {
    proxy = await ProxyProcess.start(backend!);
  }, 60_000);
  afterAll(() => proxy?.stop());

  it('another client is answered within a second while 4 MiB of unknown-opcode frames are answered on lz4', async () => {
    const good = await connection(proxy, 'startup', '127.0.5.1');
    const bad = await connection(proxy, 'lz4', '127.0.5.2');
    // The burst's answers are counted, not decoded: the attacker reads them, as it should.
    const one = frame(4, 0, 1, 0x42, Buffer.alloc(0));
    const count = Math.floor((4 * MiB) / one.length);
    let answered = 0;
    bad.socket.removeAllListeners('data');
    bad.socket.on('data', (bytes: Buffer) => (answered += bytes.length));
    bad.socket.write(Buffer.concat(Array<Buffer>(count).fill(one)));
    const waits: number[] = [];
    for (let stream = 1; stream <= 30 && !bad.closed; stream++) {
      const sent = performance.now();
      good.send(4, stream, Opcode.OPTIONS, Buffer.alloc(0));
      expect((await good.next(stream, 20_000))?.opcode).toBe(Opcode.SUPPORTED);
      waits.push(performance.now() - sent);
      await new Promise((r) => setTimeout(r, 20));
    }
    console.log(
      `OPTIONS beside the burst: longest wait ${Math.max(...waits).toFixed(0)} ms; ${answered} bytes of answers to the burst so far`,
    );
    good.close();
    bad.close();
    expect(Math.max(...waits)).toBeLessThan(1000);
  }, 60_000);
});
