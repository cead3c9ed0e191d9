// Distinct system-table PREPAREs must not grow the proxy's memory for good (issue 12, 9): the
// statements and the id prefixes that let every EXECUTE be told apart cheaply are bounded together.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientConnection } from '../../src/proxy/client-connection.js';
import type { ProxyContext } from '../../src/proxy/context.js';
import { SystemStatements } from '../../src/proxy/system-statements.js';
import type { SystemQuery } from '../../src/virtual/system-query.js';
import { openBackend, scriptedProxy } from './scripted-backend.js';

const client = { version: 4, localAddress: '127.0.0.50' } as unknown as ClientConnection;
const idOf = (answer: ReturnType<ProxyContext['intercept']['prepare']>): Buffer => {
  if (!answer || !('result' in answer) || answer.result.kind !== 'Prepared') throw new Error(`not prepared: ${JSON.stringify(answer)}`);
  return answer.result.id;
};

describe('statements the proxy prepares itself', () => {
  let proxy: Awaited<ReturnType<typeof scriptedProxy>>;
  beforeAll(async () => {
    proxy = await scriptedProxy(openBackend); // preparedCacheSize: 100
  });
  afterAll(() => proxy.close());

  it('20,000 distinct PREPAREs keep at most the cache size of statements and of id prefixes', () => {
    const { intercept } = proxy.context;
    const ids: Buffer[] = [];
    for (let i = 0; i < 20_000; i++) {
      ids.push(idOf(intercept.prepare(`SELECT key FROM system.local WHERE key = 'k${i}'`, undefined, client)));
    }
    const held = intercept.preparedStatements();
    expect(held.statements).toBe(100);
    expect(held.prefixes).toBeLessThanOrEqual(100);
    expect(intercept.owns(ids.at(-1)!)).toBe(true);
    expect(intercept.owns(ids[0]!)).toBe(false);
    expect(intercept.execute(ids[0]!, { consistency: 1 }, client)).toBeUndefined();
  });

  it('a prefix shared by two ids stays while either is kept', () => {
    const statements = new SystemStatements(2);
    const query = {} as SystemQuery;
    const a = Buffer.from('0000000a' + '11'.repeat(12), 'hex');
    const b = Buffer.from('0000000a' + '22'.repeat(12), 'hex');
    const c = Buffer.from('0000000c' + '33'.repeat(12), 'hex');
    statements.set(a, query);
    statements.set(b, query);
    expect(statements.prefixCount).toBe(1);
    statements.set(c, query); // evicts a; b still has the prefix
    expect([statements.owns(a), statements.owns(b), statements.owns(c)]).toEqual([false, true, true]);
    expect(statements.prefixCount).toBe(2);
    statements.set(a, query); // evicts b
    statements.set(c, query);
    expect(statements.size).toBe(2);
    expect([statements.owns(a), statements.owns(b), statements.owns(c)]).toEqual([true, false, true]);
  });

  it('an id is read in place inside a larger body (an EXECUTE: [short] length, then the id)', () => {
    const statements = new SystemStatements(2);
    const id = Buffer.from('0000000a' + '11'.repeat(12), 'hex');
    statements.set(id, {} as SystemQuery);
    const body = Buffer.concat([Buffer.from([0, 16]), id, Buffer.from('values after the id')]);
    expect(statements.owns(body, 2, 18)).toBe(true);
    // The same prefix but one byte more or less, or another offset, is another id.
    expect(statements.owns(body, 2, 19)).toBe(false);
    expect(statements.owns(body, 2, 17)).toBe(false);
    expect(statements.owns(body, 1, 17)).toBe(false);
  });
});
