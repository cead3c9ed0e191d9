import { describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import { freePortOn } from './loopback.js';

const listen = (port: number, host: string) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });

describe('freePortOn', () => {
  it('gives a port that every one of the hosts can listen on', async () => {
    const hosts = ['127.0.0.1', '127.0.0.2', '127.0.0.3'] as const;
    const port = await freePortOn(hosts);
    const servers = await Promise.all(hosts.map((h) => listen(port, h)));
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  });

  it('never gives a port another process holds on a later host', async () => {
    // Hold many ports on 127.0.0.3 only: a pick that checked 127.0.0.1 alone would hand some out.
    const held = await Promise.all(Array.from({ length: 500 }, () => listen(0, '127.0.0.3')));
    const taken = new Set(held.map((s) => (s.address() as { port: number }).port));
    try {
      for (let i = 0; i < 200; i++) expect(taken.has(await freePortOn(['127.0.0.1', '127.0.0.3']))).toBe(false);
    } finally {
      await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
    }
  });

  it('says which address the machine lacks and how to add it', async () => {
    // 192.0.2.1 is TEST-NET-1: never an address of this machine.
    await expect(freePortOn(['127.0.0.1', '192.0.2.1'])).rejects.toThrow(
      /192\.0\.2\.1 is not an address of this machine \(EADDRNOTAVAIL\).*sudo ifconfig lo0 alias 192\.0\.2\.1 up/,
    );
  });
});
