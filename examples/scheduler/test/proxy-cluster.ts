// Muster CQL proxies in the test process, in front of the testenv Cassandra: static membership of
// `count` instances on 127.0.0.1…n (all loopback), one port, started with the package's public
// startProxy(). Drivers reach Cassandra only through them and learn all of them from system.peers.
import { createServer } from 'node:net';
import cassandra from 'cassandra-driver';
import { sleep } from '@muster/core/adapter';
import { startProxy, type ProxyHandle } from '@muster/cql-proxy';

export interface CassandraEntry {
  readonly contactPoints: string[];
  readonly localDataCenter: string;
}

export interface ProxyCluster {
  readonly contactPoints: string[];
  readonly localDataCenter: string;
  close(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts the proxies; on this shared, overloaded machine a start can fail on a dropped backend
 * connection, so it is tried up to three times (each failure printed).
 */
export async function startProxyCluster(backend: CassandraEntry, count: number): Promise<ProxyCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(backend, count);
    } catch (error) {
      if (attempt === 3) throw error;
      console.warn(`starting ${count} CQL proxies failed (attempt ${attempt} of 3): ${(error as Error).message}`);
    }
  }
}

async function startOnce(backend: CassandraEntry, count: number): Promise<ProxyCluster> {
  const port = await freePort();
  const members = Array.from({ length: count }, (_, i) => ({ id: `proxy-${i}`, address: `127.0.0.${i + 1}`, port }));
  const proxies: ProxyHandle[] = [];
  const close = async () => {
    for (const p of proxies.reverse()) await p.close().catch(() => undefined);
  };
  try {
    for (const member of members)
      proxies.push(
        await startProxy({
          discovery: { adapter: 'static', options: { service: 'muster-cql-proxy', members, self: member.id } },
          proxy: {
            listen: { host: member.address, port },
            http: { host: '127.0.0.1', port: 0 },
            backend: { contactPoints: backend.contactPoints },
            log: { level: 'warn' },
          },
        }),
      );
    const contactPoints = members.map((m) => `${m.address}:${port}`);
    // Ready when a driver sees every instance (each has seen the others' heartbeats).
    const client = new cassandra.Client({ contactPoints, localDataCenter: backend.localDataCenter, protocolOptions: { port } });
    try {
      await client.connect();
      for (let i = 0; client.hosts.length < count; i++) {
        if (i > 600) throw new Error(`a driver saw ${client.hosts.length} of ${count} proxies after 30 s`);
        await sleep(50);
      }
    } finally {
      await client.shutdown();
    }
    return { contactPoints, localDataCenter: backend.localDataCenter, close };
  } catch (error) {
    await close();
    throw error;
  }
}
