import { createHash } from 'node:crypto';
import type { ProxyConfig } from '../config.js';
import { ErrorCode } from '../protocol/errors.js';
import type { QueryParameters } from '../protocol/query-parameters.js';
import type { Result } from '../protocol/result.js';
import { isSystemTableQuery, parseSystemQuery, type SystemQuery } from '../virtual/system-query.js';
import { preparedShape, selectSystemTable, toRowsResult, type BindValues } from '../virtual/system-select.js';
import { systemSchemas, type SystemSchemas } from '../virtual/system-tables.js';
import type { VirtualView } from '../virtual/view.js';
import type { BackendView } from './backend-cluster.js';
import type { ClientConnection, LocalAnswer } from './client-connection.js';
import type { SystemTableIntercept } from './context.js';
import { rewriteDescribeCluster } from '../virtual/describe-cluster.js';
import { refusalMessage, tablePolicy, writeRefusalMessage } from '../virtual/system-keyspaces.js';
import { mayReadSystem, statementTarget, type StatementTarget } from '../virtual/statement-target.js';
import { SystemStatements } from './system-statements.js';

export interface InterceptSources {
  readonly config: ProxyConfig;
  readonly backend: () => BackendView;
  readonly view: () => VirtualView | undefined;
  readonly gossipGeneration: number;
}

const invalid = (message: string): LocalAnswer => ({ error: { code: ErrorCode.INVALID, message } });

/**
 * Answers system.local / system.peers / system.peers_v2 from the virtual view, in QUERY, PREPARE
 * and EXECUTE. Such a statement is never forwarded (that would leak the real topology): what the
 * proxy cannot evaluate is refused with INVALID and a message saying what is supported.
 */
export function createSystemTableIntercept(sources: InterceptSources): SystemTableIntercept {
  /** Statements the proxy prepared itself; bounded like the forwarding cache. */
  const prepared = new SystemStatements(sources.config.limits.preparedCacheSize);
  let schemas: { source: BackendView; schemas: SystemSchemas } | undefined;

  const currentSchemas = (): SystemSchemas => {
    const backend = sources.backend();
    if (schemas?.source !== backend) {
      schemas = {
        source: backend,
        schemas: systemSchemas({
          local: backend.local.columns,
          peers: backend.peersColumns,
          peers_v2: backend.peersV2Columns ?? null,
          servePeersV2: sources.config.peersV2,
        }),
      };
    }
    return schemas.schemas;
  };

  const select = (query: SystemQuery, client: ClientConnection, bind: BindValues): LocalAnswer => {
    const view = sources.view();
    if (!view) return { error: { code: ErrorCode.IS_BOOTSTRAPPING, message: 'The proxy is still reading its membership; retry shortly' } };
    const result = selectSystemTable(
      query,
      {
        view,
        schemas: currentSchemas(),
        backendLocal: sources.backend().local.rows[0] ?? {},
        localAddress: client.localAddress,
        gossipGeneration: sources.gossipGeneration,
      },
      bind,
    );
    if (!result.ok) return invalid(result.message);
    client.servedView = view;
    return { result: toRowsResult(result) };
  };

  /**
   * INVALID for a read of a system table that would show the real cluster (see
   * system-keyspaces.ts), a write to one the proxy does not pass, or a statement that may touch
   * one but that the proxy cannot read.
   */
  const refusalOf = (target: StatementTarget): LocalAnswer | undefined => {
    if (target.kind === 'unreadable') {
      return invalid(
        `The proxy cannot read this statement (${target.message}) and it may touch a system table, which the proxy must ` +
          'check before forwarding; correct the statement',
      );
    }
    if (target.kind === 'modify') {
      for (const { keyspace, table } of target.tables) {
        if (keyspace === undefined) continue;
        const policy = tablePolicy(keyspace, table);
        if (policy.kind !== 'pass') return invalid(writeRefusalMessage(keyspace, table, policy));
      }
      return undefined;
    }
    if (target.kind !== 'select' || target.keyspace === undefined) return undefined;
    const policy = tablePolicy(target.keyspace, target.table);
    return policy.kind === 'refuse' ? invalid(refusalMessage(target.keyspace, target.table, policy.reason)) : undefined;
  };

  const bindOf = (parameters: QueryParameters): BindValues => ({
    ...(parameters.values ? { values: parameters.values } : {}),
    ...(parameters.valueNames ? { names: parameters.valueNames } : {}),
  });

  return {
    targets(text, keyspace, namesKeyspace) {
      // A v5 request may name its keyspace in the parameters, and then its text need not say
      // "system" at all (`UPDATE local …` with the keyspace system): decode every such statement.
      return mayReadSystem(text, keyspace) || namesKeyspace;
    },

    owns: (bytes, start, end) => prepared.owns(bytes, start, end),

    preparedStatements: () => ({ statements: prepared.size, prefixes: prepared.prefixCount }),

    query(text, keyspace, parameters, client) {
      const target = statementTarget(text, keyspace);
      if (target.kind === 'describe-cluster') {
        return {
          rewrite: (result) => {
            const view = sources.view();
            const backendLocal = sources.backend().local.rows[0] ?? {};
            // Without a view there is no virtual ring to show: show none rather than the real one.
            return view ? rewriteDescribeCluster(result, { view, backendLocal, localAddress: client.localAddress }) : { kind: 'Void' };
          },
        };
      }
      const refusal = refusalOf(target);
      if (refusal) return refusal;
      if (!isSystemTableQuery(text, keyspace)) return undefined;
      const parsed = parseSystemQuery(text, keyspace);
      if (!parsed.ok) return invalid(parsed.message);
      return select(parsed.query, client, bindOf(parameters));
    },

    prepare(text, keyspace, client) {
      const target = statementTarget(text, keyspace);
      if (target.kind === 'describe-cluster') {
        // An EXECUTE would reach the backend unseen, and its answer names the real ring.
        return invalid('DESCRIBE CLUSTER cannot be prepared through the proxy; send it as a plain query');
      }
      const refusal = refusalOf(target);
      if (refusal) return refusal;
      if (!isSystemTableQuery(text, keyspace)) return undefined;
      const parsed = parseSystemQuery(text, keyspace);
      if (!parsed.ok) return invalid(parsed.message);
      const shape = preparedShape(parsed.query, currentSchemas());
      if (!shape.ok) return invalid(shape.message);
      // Deterministic, so every instance hands out the same id for the same statement.
      const id = createHash('md5')
        .update(`muster-system\0${keyspace ?? ''}\0${text}`)
        .digest();
      prepared.set(id, parsed.query);
      const result: Result = {
        kind: 'Prepared',
        id,
        ...(client.version !== undefined && client.version >= 5 ? { resultMetadataId: createHash('md5').update(id).digest() } : {}),
        metadata: { columns: shape.variables, pkIndexes: shape.pkIndexes },
        resultMetadata: { columnCount: shape.columns.length, columns: shape.columns },
      };
      return { result };
    },

    batchStatement(text, keyspace) {
      return mayReadSystem(text, keyspace) ? refusalOf(statementTarget(text, keyspace)) : undefined;
    },

    execute(id, parameters, client) {
      const query = prepared.get(id);
      return query ? select(query, client, bindOf(parameters)) : undefined;
    },
  };
}
