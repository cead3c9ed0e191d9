// The proxy's wait for schema agreement, against scripted version reads (the Cassandra side is
// schema-agreement.cassandra3.test.ts).
import { describe, expect, it } from '@jest/globals';
import { splitBody } from '../../src/protocol/envelope.js';
import { FrameFlag, Opcode, type Frame } from '../../src/protocol/frame.js';
import { Writer } from '../../src/protocol/writer.js';
import { isSchemaChangeResult, SchemaAgreement, type SchemaVersions } from '../../src/proxy/schema-agreement.js';

const versions = (local: string, peers: Record<string, string>): SchemaVersions => ({ local, peers: new Map(Object.entries(peers)) });

/** A version source that returns `script` one read at a time, then its last entry forever. */
function scripted(script: SchemaVersions[]) {
  let reads = 0;
  return { read: async () => script[Math.min(reads++, script.length - 1)]!, reads: () => reads };
}

describe('SchemaAgreement', () => {
  it('waits until the control node and every required peer report the target version', async () => {
    const source = scripted([
      versions('v1', { '10.0.0.2': 'v1', '10.0.0.3': 'v1' }), // the control node has not heard of it yet
      versions('v2', { '10.0.0.2': 'v2', '10.0.0.3': 'v1' }),
      versions('v2', { '10.0.0.2': 'v2', '10.0.0.3': 'v2' }),
    ]);
    const agreement = new SchemaAgreement({ read: source.read, required: () => ['10.0.0.1', '10.0.0.2', '10.0.0.3'], pollInterval: 1 });
    await expect(agreement.wait('v2', 10_000)).resolves.toBe(true);
    expect(source.reads()).toBe(3);
  });

  it('ignores peers that are not required (sick, or in another data center)', async () => {
    const source = scripted([versions('v2', { '10.0.0.2': 'v2', '10.0.0.3': 'v1' })]);
    const agreement = new SchemaAgreement({ read: source.read, required: () => ['10.0.0.1', '10.0.0.2'], pollInterval: 1 });
    await expect(agreement.wait('v2', 10_000)).resolves.toBe(true);
  });

  it('gives up after the timeout, and survives failing reads', async () => {
    let reads = 0;
    const agreement = new SchemaAgreement({
      read: () => (++reads % 2 ? Promise.reject(new Error('control connection down')) : Promise.resolve(versions('v1', {}))),
      required: () => [],
      pollInterval: 5,
    });
    await expect(agreement.wait('v2', 100)).resolves.toBe(false);
    expect(reads).toBeGreaterThan(1);
  });

  it('serves concurrent waits from one poll', async () => {
    const source = scripted([versions('v1', {}), versions('v2', {})]);
    const agreement = new SchemaAgreement({ read: source.read, required: () => [], pollInterval: 1 });
    const [a, b] = await Promise.all([agreement.wait('v2', 10_000), agreement.wait('v2', 10_000)]);
    expect([a, b]).toEqual([true, true]);
    expect(source.reads()).toBe(2);
  });
});

describe('isSchemaChangeResult', () => {
  const frame = (body: Buffer, flags = 0): Frame => ({ version: 4, response: true, flags, stream: 1, opcode: Opcode.RESULT, body });
  const kind = (k: number) => Buffer.from([0, 0, 0, k, 0, 0]);

  it('recognises RESULT kind 5 only', () => {
    expect(isSchemaChangeResult(frame(kind(5)), (f) => f.body)).toBe(true);
    expect(isSchemaChangeResult(frame(kind(2)), (f) => f.body)).toBe(false);
    expect(isSchemaChangeResult({ ...frame(kind(5)), opcode: Opcode.ERROR }, (f) => f.body)).toBe(false);
  });

  it('reads the kind after a tracing id, warnings or a custom payload (a DDL answered with a replication warning)', () => {
    const open = (f: Frame) => splitBody(f).message;
    const warned = Buffer.concat([
      new Writer().writeStringList(['Your replication factor 5 for keyspace k is higher than …']).finish(),
      kind(5),
    ]);
    expect(isSchemaChangeResult(frame(warned, FrameFlag.WARNING), open)).toBe(true);
    const traced = Buffer.concat([Buffer.alloc(16, 7), kind(5)]);
    expect(isSchemaChangeResult(frame(traced, FrameFlag.TRACING), open)).toBe(true);
    expect(isSchemaChangeResult(frame(Buffer.concat([Buffer.alloc(16, 7), kind(2)]), FrameFlag.TRACING), open)).toBe(false);
  });

  it('a compressed body that cannot be inflated is not one, and does not throw', () => {
    const refuse = () => {
      throw new Error('lz4 frame body announces 65864 uncompressed bytes, outside 0..16384');
    };
    expect(isSchemaChangeResult(frame(Buffer.alloc(100), FrameFlag.COMPRESSION), refuse)).toBe(false);
  });

  it('inflates a compressed body only when it is small enough to be one', () => {
    let inflated = 0;
    const inflate = () => (inflated++, kind(5));
    expect(isSchemaChangeResult(frame(Buffer.alloc(10), FrameFlag.COMPRESSION), inflate)).toBe(true);
    expect(isSchemaChangeResult(frame(Buffer.alloc(64 * 1024), FrameFlag.COMPRESSION), inflate)).toBe(false);
    expect(inflated).toBe(1);
  });
});
