// A function or aggregate change reaches a protocol v3 client as its keyspace UPDATED, as Cassandra
// sends it (v3 has no FUNCTION or AGGREGATE target): a v3 driver (the Java driver 3.x or gocql with
// ProtoVersion 3) then refreshes that keyspace's metadata, its functions and aggregates included.
// The proxy used to skip the event for v3 clients, so another client's CREATE FUNCTION never
// reached their metadata. The real ClientConnection in front of a scripted backend.
import { afterEach, describe, expect, it } from '@jest/globals';
import { decodeEvent } from '../../src/protocol/event.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeRegister, encodeStartup } from '../../src/protocol/requests.js';
import { RawClient } from './raw-client.js';
import { openBackend, scriptedProxy } from './scripted-backend.js';

let running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.map((r) => r.close()));
  running = [];
});

describe('SCHEMA_CHANGE events for protocol v3 clients', () => {
  it.each([3, 4])('a CREATED FUNCTION reaches a v%i client registered for SCHEMA_CHANGE', async (version) => {
    const proxy = await scriptedProxy(openBackend);
    running.push(proxy);
    const client = await RawClient.open(proxy.address);
    running.push({ close: async () => client.close() });
    client.send(version, 1, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
    expect((await client.next(1))?.opcode).toBe(Opcode.READY);
    client.send(version, 2, Opcode.REGISTER, encodeRegister({ eventTypes: ['SCHEMA_CHANGE'] }));
    expect((await client.next(2))?.opcode).toBe(Opcode.READY);

    const change = {
      type: 'SCHEMA_CHANGE',
      change: 'CREATED',
      target: 'FUNCTION',
      keyspace: 'ks',
      name: 'f',
      argumentTypes: ['int'],
    } as const;
    const [connection] = [...proxy.clients];
    expect(connection!.pushEvent(change)).toBe(true);
    const event = await client.next(-1);
    expect(event?.opcode).toBe(Opcode.EVENT);
    expect(decodeEvent(event!.body)).toEqual(
      version === 3 ? { type: 'SCHEMA_CHANGE', change: 'UPDATED', target: 'KEYSPACE', keyspace: 'ks' } : change,
    );
  });
});
