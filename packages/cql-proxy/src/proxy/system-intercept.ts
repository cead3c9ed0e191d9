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

  const bindOf = (parameters: QueryParameters): BindValues => ({
    ...(parameters.values ? { values: parameters.values } : {}),
    ...(parameters.valueNames ? { names: parameters.valueNames } : {}),
  });

  return {
    targets(text, keyspace, version) {
      // v5 may name the keyspace in the parameters: a bare `local` or `peers` is then worth decoding.
      return isSystemTableQuery(text, keyspace) || (version >= 5 && /\b(local|peers(_v2)?)\b/i.test(text));
    },

    owns: (id) => prepared.owns(id),

    preparedStatements: () => ({ statements: prepared.size, prefixes: prepared.prefixCount }),

    query(text, keyspace, parameters, client) {
      if (!isSystemTableQuery(text, keyspace)) return undefined;
      const parsed = parseSystemQuery(text, keyspace);
      if (!parsed.ok) return invalid(parsed.message);
      return select(parsed.query, client, bindOf(parameters));
    },

    prepare(text, keyspace, client) {
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

    execute(id, parameters, client) {
      const query = prepared.get(id);
      return query ? select(query, client, bindOf(parameters)) : undefined;
    },
  };
}
