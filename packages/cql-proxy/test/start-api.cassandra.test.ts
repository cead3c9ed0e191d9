// The programmatic API: startProxy(config) from code, as a package user calls it (the public entry
// @muster/cql-proxy), a driver through it, close() releasing the ports.
import { describe, expect, it } from '@jest/globals';
import cassandra from 'cassandra-driver';
import { connect, createServer, type AddressInfo } from 'node:net';
import pino from 'pino';
import { startProxy } from '@muster/cql-proxy';
import { testServer } from '../../../scripts/testenv/state.mjs';
import { freePort } from './proxy/harness.js';

const backend = testServer<{ contactPoints: string[]; localDataCenter: string }>('cassandra');
const TIMEOUT = 120_000;

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(true));
  });

(backend ? describe : describe.skip)('startProxy()', () => {
  it(
    'starts a proxy from a config object, logs its config redacted, serves a driver, and close() releases its ports',
    async () => {
      const logs: string[] = [];
      const proxy = await startProxy(
        {
          discovery: { adapter: 'static', options: { members: [{ id: 'api-0', address: '127.0.0.1', port: 1 }], self: 'api-0' } },
          // The backend does not authenticate: the password is never used, only logged (redacted).
          proxy: {
            listen: { port: 0 },
            http: { port: 0 },
            backend: { contactPoints: backend!.contactPoints, username: 'app', password: 'hunter2-secret' },
          },
        },
        { logger: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }) },
      );
      expect(proxy.config.instanceId).toBe('api-0');
      const started = logs
        .map((line) => JSON.parse(line) as { msg: string; config?: unknown })
        .find((l) => l.msg === 'starting muster-cql-proxy');
      expect(JSON.stringify(started?.config)).toContain('"password":"<redacted>"');
      expect(logs.join('')).not.toContain('hunter2-secret');
      const client = new cassandra.Client({
        contactPoints: [`127.0.0.1:${proxy.port}`],
        localDataCenter: backend!.localDataCenter,
        protocolOptions: { port: proxy.port },
      });
      try {
        await client.connect();
        const { rows } = await client.execute('SELECT release_version FROM system.local');
        expect(rows[0]?.release_version).toMatch(/^5\./);
        const health = await fetch(`http://127.0.0.1:${proxy.httpPort}/health/readiness`);
        expect(health.status).toBe(200);
      } finally {
        await client.shutdown();
      }
      await proxy.close();
      expect(await refused(proxy.port)).toBe(true);
      expect(await refused(proxy.httpPort)).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'a port another process holds fails the start naming the setting and the address, and leaves nothing listening',
    async () => {
      const holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
      const taken = (holder.address() as AddressInfo).port;
      const config = (listen: number, http: number) => ({
        discovery: { adapter: 'static', options: { members: [{ id: 'busy-0', address: '127.0.0.1', port: 1 }], self: 'busy-0' } },
        proxy: {
          listen: { port: listen },
          http: { port: http },
          backend: { contactPoints: backend!.contactPoints },
          log: { level: 'silent' },
        },
      });
      try {
        const cql = await startProxy(config(taken, 0)).catch((e: unknown) => e);
        expect((cql as Error).message).toBe(`proxy.listen: 127.0.0.1:${taken} is already in use`);
        const free = await freePort();
        const http = await startProxy(config(free, taken)).catch((e: unknown) => e);
        expect((http as Error).message).toBe(`proxy.http: 127.0.0.1:${taken} is already in use`);
        // The CQL listener it had opened before is closed again.
        expect(await refused(free)).toBe(true);
      } finally {
        holder.close();
      }
    },
    TIMEOUT,
  );
});

describe('startProxy() config errors', () => {
  it('refuses a broken config before starting anything, as --check does', async () => {
    const error = await startProxy({ discovery: { adapter: 'static', options: { memebers: [] } }, proxy: {} }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('discovery.options.memebers: unknown key');
  });
});
