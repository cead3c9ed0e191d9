// The loopback proxy the chaos run puts between a contender and its server: it forwards both ways,
// keeps order under latency, and a drop cuts live connections and refuses new ones until lifted.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { TcpProxy } from '@muster/chaos';

let echo: Server;
let proxy: TcpProxy;

beforeAll(async () => {
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  proxy = new TcpProxy({ host: '127.0.0.1', port: (echo.address() as { port: number }).port });
  await proxy.listen();
});

afterAll(async () => {
  await proxy.close();
  await new Promise((resolve) => echo.close(resolve));
});

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(proxy.port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/** Sends `text` (one write per part) and resolves with the first `text.length` bytes echoed back. */
function roundTrip(s: Socket, text: string, parts = [text]): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const onData = (d: Buffer) => {
      got += d.toString();
      if (got.length >= text.length) {
        s.off('data', onData);
        resolve(got);
      }
    };
    s.on('data', onData);
    for (const part of parts) s.write(part);
  });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

const closed = (s: Socket) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

test('forwards both ways, in order, with and without latency', async () => {
  const s = await open();
  expect(await roundTrip(s, 'abc')).toBe('abc');
  proxy.setLatency(30);
  const parts = ['1', '2', '3', '4', '5'];
  expect(await roundTrip(s, parts.join(''), parts)).toBe('12345');
  proxy.setLatency(0);
  s.destroy();
});

test('drop cuts live connections and refuses new ones until lifted', async () => {
  const live = await open();
  expect(await roundTrip(live, 'x')).toBe('x');
  proxy.drop(true);
  await closed(live);
  const refused = await open();
  await closed(refused);
  proxy.drop(false);
  const again = await open();
  expect(await roundTrip(again, 'back')).toBe('back');
  again.destroy();
});

test('a black hole keeps connections open but swallows bytes; a connection it hit stays broken, new ones work', async () => {
  const hit = await open();
  expect(await roundTrip(hit, 'a')).toBe('a');
  proxy.blackHole('up');
  const during = await open();
  let echoed = '';
  for (const s of [hit, during]) s.on('data', (d: Buffer) => (echoed += d.toString()));
  const before = proxy.swallowed;
  hit.write('lost');
  during.write('also');
  await until(() => proxy.swallowed === before + 8);
  proxy.blackHole(undefined);
  const after = await open();
  expect(await roundTrip(after, 'fine')).toBe('fine');
  hit.write('still');
  await until(() => proxy.swallowed === before + 13);
  // The swallowed requests never reached the echo server, so nothing came back on either.
  expect(await roundTrip(after, 'again')).toBe('again');
  expect(echoed).toBe('');
  expect(hit.destroyed).toBe(false);
  for (const s of [hit, during, after]) s.destroy();
});

test('canned errors answer each new connection with an HTTP error and close it, cutting live ones first', async () => {
  const live = await open();
  expect(await roundTrip(live, 'x')).toBe('x');
  proxy.failWith({ pick: (method) => (method === 'PUT' ? 409 : 503) });
  await closed(live);
  for (const [method, status] of [
    ['PUT', 409],
    ['GET', 503],
  ] as const) {
    const s = await open();
    let answer = '';
    s.on('data', (d: Buffer) => (answer += d.toString()));
    s.write(`${method} /v1/kv/x HTTP/1.1\r\nHost: x\r\n\r\n`);
    await closed(s);
    expect(answer).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
  }
  proxy.failWith(undefined);
  const again = await open();
  expect(await roundTrip(again, 'back')).toBe('back');
  again.destroy();
});
