import { decodeError } from '../../src/protocol/error-message.js';
import { Opcode } from '../../src/protocol/frame.js';
import { encodeStartup } from '../../src/protocol/requests.js';
import { RawClient } from '../proxy/raw-client.js';
import type { Case, Setup } from './cases.js';
import type { ProxyProcess } from './proxy-process.js';
import type { ClassResult } from './report.js';

/** A connection put through `setup`, from `localAddress`. */
export async function connection(proxy: ProxyProcess, setup: Setup, localAddress = '127.0.0.2'): Promise<RawClient> {
  const client = await RawClient.open(proxy.address, localAddress);
  if (setup === 'none') return client;
  const version = setup === 'v5' ? 5 : 4;
  const options = new Map([['CQL_VERSION', '3.0.0']]);
  if (setup === 'lz4' || setup === 'snappy') options.set('COMPRESSION', setup);
  client.send(version, 0, Opcode.STARTUP, encodeStartup({ options }));
  const ready = await client.next(0, 20_000);
  if (ready?.opcode !== Opcode.READY) throw new Error(`STARTUP (${setup}) was answered ${ready ? `opcode ${ready.opcode}` : 'by a close'}`);
  if (setup === 'lz4' || setup === 'snappy') client.useCompression(setup);
  if (setup === 'v5') client.useSegments(false);
  return client;
}

/** Why a case's answer is wrong, or undefined when it is right. */
async function judge(client: RawClient, c: Case): Promise<string | undefined> {
  if (c.expect === 'close') {
    client.socket.end();
    for (;;) {
      const frame = await client.next(undefined, 15_000).catch(() => 'silent' as const);
      if (frame === 'silent') return 'the connection stayed open';
      if (frame === undefined) return undefined;
    }
  }
  const reply = await client.next(c.stream, 10_000).catch(() => 'silent' as const);
  if (reply === 'silent') return 'no answer within 10 s';
  if (reply === undefined) return c.expect === 'any' ? undefined : 'closed without an answer';
  if (c.expect === 'any') return undefined;
  if (reply.opcode !== Opcode.ERROR) return `answered opcode 0x${reply.opcode.toString(16)}, not ERROR`;
  const error = decodeError(reply.body);
  if (c.code !== undefined && error.code !== c.code) return `error code 0x${error.code.toString(16)} (${error.message})`;
  if (c.message && !c.message.test(error.message)) return `error message ${JSON.stringify(error.message)}`;
  return undefined;
}

/**
 * Runs one class of cases against the proxy: fatal ones on a connection each, the others on one
 * connection per setup (reopened if the proxy closed it). Then checks the proxy is alive and a
 * fresh driver works, and measures its memory.
 */
export async function runClass(proxy: ProxyProcess, name: string, cases: readonly Case[]): Promise<ClassResult & { failures: string[] }> {
  const rssBefore = proxy.rss();
  const shared = new Map<Setup, RawClient>();
  const failures: string[] = [];
  let crashes = 0;
  for (const [index, c] of cases.entries()) {
    let client = c.fatal ? undefined : shared.get(c.setup);
    if (!client || client.closed) {
      client = await connection(proxy, c.setup);
      if (!c.fatal) shared.set(c.setup, client);
    }
    client.socket.write(c.bytes);
    const wrong = await judge(client, c);
    if (wrong) failures.push(`${name} #${index}: ${wrong}`);
    if (c.fatal) client.close();
    if (proxy.exited) {
      crashes++;
      break;
    }
  }
  for (const client of shared.values()) client.close();
  const freshClient = proxy.exited ? false : await proxy.works();
  return {
    name,
    cases: cases.length,
    crashes,
    wrong: failures.length,
    failures,
    rssBefore,
    rssAfter: proxy.exited ? NaN : proxy.rss(),
    peakRss: proxy.exited ? NaN : proxy.peakRss(),
    freshClient,
  };
}
