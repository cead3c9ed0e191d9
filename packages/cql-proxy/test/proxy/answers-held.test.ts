// A client that sends requests the proxy answers itself (OPTIONS, system.local) and never reads
// the answers: what the proxy holds for it stays bounded, and every request is still answered once
// it reads. One 64 KiB read of 9-byte OPTIONS was answered whole, about 660 KiB of SUPPORTED queued
// in the proxy behind a full socket (one read of system.local SELECTs: about 1.4 MiB); 1024 such
// clients would hold a GiB. The real ClientConnection over a scripted backend (no Cassandra: the
// proxy answers these requests itself), so the proxy's side of the socket can be looked at.
import { afterEach, expect, it } from '@jest/globals';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeStartup } from '../../src/protocol/requests.js';
import { frame } from '../adversarial/cases.js';
import { RawClient } from './raw-client.js';
import { openBackend, scriptedProxy } from './scripted-backend.js';

let close: (() => Promise<void>) | undefined;
afterEach(() => close?.());

const until = async (condition: () => boolean, ms: number) => {
  for (const deadline = Date.now() + ms; !condition() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 5));
};

it('a client that never reads holds at most about 64 KiB of answers in the proxy, and gets them all once it reads', async () => {
  const proxy = await scriptedProxy(openBackend);
  const client = await RawClient.open(proxy.address);
  close = async () => {
    client.close();
    await proxy.close();
  };
  client.send(4, 0, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
  expect((await client.next(0))?.opcode).toBe(Opcode.READY);
  client.send(4, 2, Opcode.OPTIONS, Buffer.alloc(0));
  const supported = await client.next(2);
  const answerBytes = 9 + supported!.body.length;
  const served = [...proxy.clients][0]!.socket;
  client.socket.pause();
  const chunk = Buffer.concat(Array<Buffer>(Math.floor((64 * 1024) / 9)).fill(frame(4, 0, 1, Opcode.OPTIONS, Buffer.alloc(0))));
  // Reads of 64 KiB until the kernel's buffers are full and the proxy stops reading this client.
  let written = served.bytesRead;
  let sent = 0;
  while (!served.isPaused() && sent < 200) {
    client.socket.write(chunk);
    written += chunk.length;
    sent++;
    await until(() => served.isPaused() || served.bytesRead === written, 5000);
  }
  expect(served.isPaused()).toBe(true);
  // The answers waiting in the proxy (the kernel holds its socket buffers' worth besides).
  expect(served.writableLength).toBeLessThan(128 * 1024);
  // Every request is answered once the client reads: counted in bytes (the answers are alike).
  let received = 0;
  client.socket.on('data', (bytes: Buffer) => (received += bytes.length));
  client.socket.resume();
  const expected = (sent * chunk.length * answerBytes) / 9;
  await until(() => received >= expected, 20_000);
  expect(received).toBe(expected);
}, 60_000);
