import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LocalTaskStore } from './local-store.js';
import type { TableOp } from './task-table.js';

const ops = new Set(['submit', 'seal', 'assign', 'start', 'finish', 'abandon']);
const maxBody = 1 << 20;

async function body(req: IncomingMessage): Promise<unknown> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBody) throw new Error(`request body over ${maxBody} bytes`);
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The task table's single writer, served on loopback: `POST /ops` takes one TableOp, `GET /state`
 * returns the table. Masters and workers in other processes reach it through HttpTaskStore; the
 * fencing check runs here, in the one process that writes the file.
 */
export class TableServer implements AsyncDisposable {
  readonly #server: Server;
  readonly #store: LocalTaskStore;

  private constructor(server: Server, store: LocalTaskStore) {
    this.#server = server;
    this.#store = store;
  }

  static async listen(store: LocalTaskStore, options: { host?: string; port?: number } = {}): Promise<TableServer> {
    const server = createServer((req, res) => {
      const reply = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      };
      const handle = async () => {
        if (req.method === 'GET' && req.url === '/state') return reply(200, await store.state());
        if (req.method === 'POST' && req.url === '/ops') {
          const op = (await body(req)) as TableOp;
          if (typeof op !== 'object' || op === null || !ops.has(op.op)) return reply(400, { error: 'expected a table op' });
          return reply(200, await store.apply(op));
        }
        return reply(404, { error: `no route ${req.method} ${req.url}` });
      };
      handle().catch((error: unknown) => reply(500, { error: (error as Error).message }));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
    return new TableServer(server, store);
  }

  get url(): string {
    const { address, port } = this.#server.address() as AddressInfo;
    return `http://${address}:${port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await this.#store.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
