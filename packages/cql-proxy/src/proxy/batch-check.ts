import { ErrorCode } from '../protocol/errors.js';
import { decodeBatch } from '../protocol/requests.js';
import type { LocalAnswer } from './client-connection.js';
import type { SystemTableIntercept } from './context.js';
import type { PreparedCache } from './prepared-cache.js';

/**
 * The answer the proxy owes a BATCH itself, or undefined to forward it. Its query strings are
 * checked as a QUERY's are (a conditional write to system.local would answer with the real host
 * id); its prepared ids must have been prepared through the proxy, where their text was checked,
 * as an EXECUTE's must: an id the backend cached for a direct client could name anything.
 */
export function batchRefusal(
  body: Buffer,
  version: number,
  keyspace: string | undefined,
  intercept: SystemTableIntercept,
  prepared: PreparedCache,
): LocalAnswer | undefined {
  const batch = decodeBatch(body, version);
  const inUse = batch.keyspace ?? keyspace;
  for (const statement of batch.statements) {
    if (statement.kind === 'query') {
      const refusal = intercept.batchStatement(statement.query, inUse);
      if (refusal) return refusal;
    } else if (intercept.owns(statement.id)) {
      // A read of system.local or the like, answered by the proxy: Cassandra refuses it in a batch too.
      return {
        error: { code: ErrorCode.INVALID, message: 'Invalid statement in batch: only UPDATE, INSERT and DELETE statements are allowed' },
      };
    } else if (!prepared.get(statement.id)) {
      const id = statement.id;
      return {
        error: {
          code: ErrorCode.UNPREPARED,
          message: `Prepared statement 0x${id.toString('hex')} in the BATCH was not prepared through this proxy (or it has been evicted); prepare it again`,
          details: { code: ErrorCode.UNPREPARED, id },
        },
      };
    }
  }
  return undefined;
}
