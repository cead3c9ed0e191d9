// The fault-test TCP proxy against a loopback echo server: bytes arrive intact and in order, a
// downstream delay holds answers back by at least the delay, and dropped connections are reset.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTcpProxy, type TcpProxy } from '../tcp-proxy.mjs';

let echo: Server;
let proxy: TcpProxy;
/** Bytes the echo server has received. */
let received = 0;

beforeAll(async () => {
  echo = createServer((s) =>
    s
      .on('error', () => undefined)
      .on('data', (d: Buffer) => void (received += d.length))
      .pipe(s),
  );
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  proxy = await startTcpProxy({ target: { host: '127.0.0.1', port: (echo.address() as AddressInfo).port } });
});
afterAll(async () => {
  await proxy.close();
  echo.close();
});

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: proxy.host, port: proxy.port }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Sends `text` and resolves with the echo once `text.length` bytes are back, with the time they took. */
function roundTrip(s: Socket, text: string): Promise<{ echoed: string; ms: number }> {
  return new Promise((resolve) => {
    let got = '';
    const sent = performance.now();
    const onData = (d: Buffer) => {
      got += d.toString();
      if (got.length >= text.length) {
        s.off('data', onData);
        resolve({ echoed: got, ms: performance.now() - sent });
      }
    };
    s.on('data', onData);
    s.write(text);
  });
}

describe('tcp-proxy', () => {
  test('relays bytes in order, and a downstream delay holds every answer back', async () => {
    const s = await open();
    const text = Array.from({ length: 2000 }, (_, i) => `${i},`).join('');
    expect((await roundTrip(s, text)).echoed).toBe(text);
    proxy.setDelay({ downstream: 300 });
    const delayed = await roundTrip(s, 'late');
    expect(delayed.echoed).toBe('late');
    // A lower bound only: the proxy never hands bytes on before their delay has passed.
    expect(delayed.ms).toBeGreaterThanOrEqual(299);
    proxy.setDelay({ downstream: 0 });
    s.destroy();
  });

  test('dropConnections resets open connections; refuse() resets new ones', async () => {
    const s = await open();
    await roundTrip(s, 'x');
    const closed = new Promise<void>((r) => s.once('close', () => r()));
    s.on('error', () => undefined);
    proxy.dropConnections();
    await closed;
    proxy.refuse(true);
    const refused = await open().then(
      (t) =>
        new Promise<string>((r) => (t.on('error', (e: NodeJS.ErrnoException) => r(e.code ?? 'error')), t.once('close', () => r('closed')))),
      (e: NodeJS.ErrnoException) => e.code ?? 'error',
    );
    expect(['ECONNRESET', 'closed']).toContain(refused);
    proxy.refuse(false);
    const again = await open();
    expect((await roundTrip(again, 'back')).echoed).toBe('back');
    again.destroy();
  });

  test('hold() keeps every byte back on old and new connections, and hold(false) hands them on in order', async () => {
    const old = await open();
    await roundTrip(old, 'x');
    proxy.hold(true);
    const before = received;
    const held = [roundTrip(old, 'first'), open().then((s) => roundTrip(s, 'second').finally(() => s.destroy()))];
    // An absence can only be watched for a while: nothing reaches the server while held.
    await new Promise((r) => setTimeout(r, 300));
    expect(received).toBe(before);
    proxy.hold(false);
    expect((await Promise.all(held)).map((r) => r.echoed)).toEqual(['first', 'second']);
    old.destroy();
  });
});
