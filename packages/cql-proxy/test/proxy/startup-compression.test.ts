// A STARTUP's COMPRESSION is settled as Cassandra settles it (StartupMessage.execute): any case of
// the name, snappy refused in v5, refusals in Cassandra's words. The proxy used to refuse "LZ4"
// (Cassandra takes it) and answered every refusal "Unsupported compression X".
import { afterEach, describe, expect, it } from '@jest/globals';
import { lz4, snappy } from '../../src/protocol/compression.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { decodeError } from '../../src/protocol/error-message.js';
import { FrameFlag, Opcode } from '../../src/protocol/frame.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { startupCompression } from '../../src/proxy/startup-compression.js';
import { RawClient } from './raw-client.js';
import { openBackend, scriptedProxy } from './scripted-backend.js';

const both = (name: 'lz4' | 'snappy') => (name === 'lz4' ? lz4 : snappy);

describe('startupCompression', () => {
  it('takes the name in any case, and none at all', () => {
    expect(startupCompression(undefined, 4, both)).toEqual({});
    expect(startupCompression('LZ4', 4, both)).toEqual({ name: 'lz4', codec: lz4 });
    expect(startupCompression('Snappy', 3, both)).toEqual({ name: 'snappy', codec: snappy });
    expect(startupCompression('lz4', 5, both)).toEqual({ name: 'lz4', codec: lz4 });
  });

  it("refuses in Cassandra's words", () => {
    expect(startupCompression('snappy', 5, both)).toEqual({ refusal: 'Snappy compression is not supported in protocol V5' });
    expect(startupCompression('zstd', 4, both)).toEqual({ refusal: 'Unknown compression algorithm: zstd' });
    expect(startupCompression('', 4, both)).toEqual({ refusal: 'Unknown compression algorithm: ' });
    expect(startupCompression('SNAPPY', 4, () => undefined)).toEqual({ refusal: 'This instance does not support Snappy compression' });
  });
});

describe('STARTUP compression through a client connection', () => {
  let running: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(running.map((r) => r.close()));
    running = [];
  });

  const connect = async () => {
    const proxy = await scriptedProxy(openBackend);
    running.push(proxy);
    const client = await RawClient.open(proxy.address);
    running.push({ close: async () => client.close() });
    return client;
  };
  const startup = (compression: string) =>
    encodeStartup({
      options: new Map([
        ['CQL_VERSION', '3.0.0'],
        ['COMPRESSION', compression],
      ]),
    });

  it('"LZ4" is lz4: READY, then an lz4-compressed request is read and answered', async () => {
    const client = await connect();
    client.send(4, 1, Opcode.STARTUP, startup('LZ4'));
    expect((await client.next(1))?.opcode).toBe(Opcode.READY);
    client.useCompression('lz4');
    client.send(
      4,
      2,
      Opcode.QUERY,
      encodeQuery({ query: 'SELECT host_id FROM system.local', parameters: { consistency: Consistency.ONE } }, 4),
    );
    const answer = await client.next(2);
    expect(answer?.opcode).toBe(Opcode.RESULT);
  });

  it("snappy on v5 is refused with PROTOCOL_ERROR in Cassandra's words", async () => {
    const client = await connect();
    client.send(5, 1, Opcode.STARTUP, startup('snappy'));
    const answer = await client.next(1);
    expect(answer?.opcode).toBe(Opcode.ERROR);
    expect(decodeError(answer!.body)).toMatchObject({ code: 0x000a, message: 'Snappy compression is not supported in protocol V5' });
    expect(answer!.flags & FrameFlag.COMPRESSION).toBe(0);
  });
});
