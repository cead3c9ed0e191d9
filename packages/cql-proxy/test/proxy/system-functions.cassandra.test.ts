// Issue 12, 4: the functions health checks, cqlsh and drivers put in a system.local read are
// answered by the proxy with the result columns (names and types) the real server gives them, and
// toJson() writes values as the server writes them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { testServer } from '../../../../scripts/testenv/state.mjs';
import { cqlTypeName } from '../../src/protocol/types.js';
import { startProxy, type CassandraEntry, type RunningProxy } from './harness.js';
import { Cql } from './system-walk.js';

const backend = testServer<CassandraEntry>('cassandra');
const TIMEOUT = 120_000;

const probes = [
  'SELECT now() FROM system.local',
  'SELECT uuid() FROM system.local',
  'SELECT toTimestamp(now()) FROM system.local',
  'SELECT currentTimestamp() FROM system.local',
  'SELECT currentDate(), currentTime(), currentTimeUUID() FROM system.local',
  'SELECT toUnixTimestamp(now()), toDate(now()) FROM system.local',
  "SELECT key, now() AS probe FROM system.local WHERE key = 'local'",
  'SELECT system.now() FROM system.local',
  'SELECT toJson(key), toJson(cluster_name), toJson(release_version), toJson(partitioner), toJson(data_center) FROM system.local',
  'SELECT toJson(bootstrapped), toJson(cql_version), toJson(native_protocol_version), toJson(schema_version) FROM system.local',
  'SELECT toJson(tokens), toJson(host_id), toJson(rpc_address), toJson(rpc_port) FROM system.local',
  'SELECT toJson(currentTimestamp()), toJson(currentDate()), toJson(now()), toJson(toUnixTimestamp(now())) FROM system.local',
];
/** Columns whose value is the backend's own, so the JSON text must be the same byte for byte. */
const SAME_VALUE =
  /tojson\((key|cluster_name|release_version|partitioner|data_center|bootstrapped|cql_version|native_protocol_version|schema_version)\)/;

(backend ? describe : describe.skip)('functions in system.local reads', () => {
  let running: RunningProxy;
  let direct: Cql;
  let proxied: Cql;
  beforeAll(async () => {
    running = await startProxy(backend!);
    direct = await Cql.open(backend!.contactPoints[0]!);
    proxied = await Cql.open(running.address);
  }, TIMEOUT);
  afterAll(async () => {
    direct?.close();
    proxied?.close();
    await running?.stop();
  });

  it.each(probes)(
    '%s',
    async (probe) => {
      const real = await direct.query(probe);
      const ours = await proxied.query(probe);
      expect(real.error).toBeUndefined();
      expect(ours.error).toBeUndefined();
      const shape = (a: typeof real) => a.columns!.map((c) => `${c.name} ${cqlTypeName(c.type)}`);
      expect(shape(ours)).toEqual(shape(real));
      expect(ours.rows).toHaveLength(1);
      const realRow = real.rows![0]!;
      const ourRow = ours.rows![0]!;
      for (const c of real.columns!) {
        if (SAME_VALUE.test(c.name)) expect(ourRow[c.name]).toBe(realRow[c.name]);
        // toJson of a node-specific column: the same JSON shape, not the same value.
        else if (c.name.startsWith('system.tojson(')) {
          const kind = (v: unknown) =>
            v === 'null' ? 'null' : Array.isArray(JSON.parse(String(v))) ? 'array' : typeof JSON.parse(String(v));
          expect(kind(ourRow[c.name])).toBe(kind(realRow[c.name]));
        }
      }
    },
    TIMEOUT,
  );
});
