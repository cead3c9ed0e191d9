// ClientConnection.endWhenAnswered, which the drain relies on to lose nothing: the connection ends
// with a FIN only after the answer to every request already sent, never with a reset, and stays
// counted until the client closes its side.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Consistency } from '../../src/protocol/consistency.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { until } from './harness.js';
import { RawClient } from './raw-client.js';
import { openBackend, scriptedProxy, type Forwarded } from './scripted-backend.js';

let running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

const startup = encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) });
const held = 'SELECT held FROM ks.t';
const queryOf = (text: string) => encodeQuery({ query: text, parameters: { consistency: Consistency.ONE } }, 4);

/** A proxy whose backend holds the answer to `held` until `release()`. */
async function proxyHoldingOneAnswer() {
  let release = () => undefined as void;
  const answered = new Promise<void>((resolve) => (release = resolve));
  const script = (request: Forwarded) =>
    request.opcode === Opcode.QUERY && request.body.includes(Buffer.from(held))
      ? answered.then(() => openBackend(request))
      : openBackend(request);
  const proxy = await scriptedProxy(script);
  running.push(proxy);
  const client = await RawClient.open(proxy.address);
  running.push({ close: async () => client.close() });
  const socketEvents: string[] = [];
  client.socket.on('end', () => socketEvents.push('end'));
  client.socket.on('error', (e: NodeJS.ErrnoException) => socketEvents.push(`error ${e.code ?? e.message}`));
  client.send(4, 1, Opcode.STARTUP, startup);
  expect((await client.next(1))?.opcode).toBe(Opcode.READY);
  const connection = await until('the client connection', () => [...proxy.clients][0]);
  return { proxy, client, connection, release, socketEvents };
}

describe('ClientConnection.endWhenAnswered', () => {
  it('answers the request in flight, then half-closes with a FIN, never a reset', async () => {
    const { proxy, client, connection, release, socketEvents } = await proxyHoldingOneAnswer();
    client.send(4, 7, Opcode.QUERY, queryOf(held));
    await until('the held request in flight', () => connection.inFlight === 1);

    connection.endWhenAnswered();
    // Held: nothing may end the connection while its answer is outstanding.
    await new Promise((resolve) => setImmediate(resolve));
    expect(client.closed).toBe(false);
    expect(proxy.clients.has(connection)).toBe(true);

    release();
    const answer = await client.next(7);
    expect(answer?.opcode).toBe(Opcode.RESULT);
    await until('the client sees the end of the stream', () => client.closed);
    expect(socketEvents).toEqual(['end']);
    // The client's own FIN (RawClient does not allow half-open) lets the proxy forget it.
    await until('the proxy forgets the connection', () => !proxy.clients.has(connection));
  });

  it('half-closes at once when nothing is in flight', async () => {
    const { proxy, client, connection, socketEvents } = await proxyHoldingOneAnswer();
    connection.endWhenAnswered();
    expect(await client.next(undefined, 10_000)).toBeUndefined();
    expect(socketEvents).toEqual(['end']);
    await until('the proxy forgets the connection', () => !proxy.clients.has(connection));
  });

  // Both failed before: the FIN went out a microtask after the call, before the proxy had read a
  // request already in its kernel buffer (the driver then saw EOF for a request it had written).
  it('answers a request that reached the kernel before the call, then half-closes', async () => {
    const { client, connection, socketEvents } = await proxyHoldingOneAnswer();
    client.send(4, 9, Opcode.QUERY, queryOf('SELECT other FROM ks.t'));
    // Same turn of the event loop: the request is in the kernel, not read by the proxy yet.
    connection.endWhenAnswered();
    expect((await client.next(9))?.opcode).toBe(Opcode.RESULT);
    await until('the client sees the end of the stream', () => client.closed);
    expect(socketEvents).toEqual(['end']);
  });

  it('does not half-close while its socket is paused (backpressure): what waits unread is answered first', async () => {
    const { client, connection, socketEvents } = await proxyHoldingOneAnswer();
    connection.socket.pause();
    client.send(4, 11, Opcode.QUERY, queryOf('SELECT other FROM ks.t'));
    connection.endWhenAnswered();
    // Several turns of the event loop pass with the request unread: nothing may end the connection.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(client.closed).toBe(false);
    connection.socket.resume();
    expect((await client.next(11))?.opcode).toBe(Opcode.RESULT);
    await until('the client sees the end of the stream', () => client.closed);
    expect(socketEvents).toEqual(['end']);
  });

  // A burst over 64 KiB makes the connection yield its turn (a pause of one setImmediate): an answer
  // delivered in that pause found the socket paused and left the ending to a resume that never checked.
  it('half-closes after a burst long enough to make it yield its turn, whenever the last answer comes', async () => {
    const burst = Buffer.concat(Array<Buffer>(8000).fill(Buffer.from([4, 0, 0, 3, Opcode.OPTIONS, 0, 0, 0, 0])));
    for (let turns = 0; turns < 12; turns++) {
      const { client, connection, release } = await proxyHoldingOneAnswer();
      client.send(4, 7, Opcode.QUERY, queryOf(held));
      await until('the held request in flight', () => connection.inFlight === 1);
      connection.endWhenAnswered();
      // The answer comes `turns` turns of the event loop after the burst is sent: before, during or after the yield.
      client.socket.write(burst);
      for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
      release();
      expect((await client.next(7))?.opcode).toBe(Opcode.RESULT);
      await until(`the client sees the end of the stream (answer ${turns} turns after the burst)`, () => client.closed, 5000);
    }
  });

  it('stays counted while the client keeps its side open', async () => {
    const { proxy, connection } = await proxyHoldingOneAnswer();
    const halfOpen = await RawClient.open(proxy.address);
    running.push({ close: async () => halfOpen.close() });
    // A client that allows half-open: it hears the FIN but has not closed yet.
    halfOpen.socket.allowHalfOpen = true;
    const second = await until('the second connection', () => [...proxy.clients].find((c) => c !== connection));
    let ended = false;
    halfOpen.socket.on('end', () => (ended = true));
    second.endWhenAnswered();
    await until('the FIN reaches the client', () => ended);
    expect(proxy.clients.has(second)).toBe(true);
    halfOpen.socket.end();
    await until('the proxy forgets it once the client closes', () => !proxy.clients.has(second));
  });
});
