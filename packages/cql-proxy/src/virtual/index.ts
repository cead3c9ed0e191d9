/**
 * The virtual cluster: proxy instances presented to drivers as Cassandra nodes. Pure logic, no
 * I/O: membership → ordered ring (host ids, tokens) → published view → system-table rows and
 * client events. The proxy layer feeds it Discovery and HeartbeatStore state and encodes what
 * comes out.
 */
export { isAdvertisable, canonicalAddress } from './address.js';
export { HOST_ID_NAMESPACE, hostIdFor, hostIdName, nameBasedUuid } from './host-id.js';
export {
  DEFAULT_TOKENS_PER_MEMBER,
  MAX_TOKENS_PER_MEMBER,
  assignTokens,
  hash64,
  isValidToken,
  stableTokens,
  tokensPerMember,
  zdmTokens,
  type TokenMode,
  type TokenOptions,
} from './tokens.js';
export {
  DEFAULT_RACK,
  deriveMembership,
  memberKey,
  type ExcludedEndpoint,
  type MemberPlacement,
  type Membership,
  type MembershipInput,
  type MembershipOptions,
  type SelfIdentity,
  type VirtualMember,
} from './membership.js';
export { advanceView, type VirtualView } from './view.js';
export { CqlLexer, CqlSyntaxError, type Token } from './cql-lexer.js';
export {
  SYSTEM_TABLES,
  isSystemTableQuery,
  parseSystemQuery,
  type BindMarker,
  type Literal,
  type ParsedSystemQuery,
  type Relation,
  type Selector,
  type SystemQuery,
  type SystemTableName,
  type Term,
} from './system-query.js';
export { schemaOf, systemSchemas, tableSchema, type SchemaSources, type SystemSchemas, type TableSchema } from './system-tables.js';
export { PARTITIONER, localRow, peerRows, type BackendLocalRow, type Row, type RowContext } from './system-rows.js';
export {
  preparedShape,
  selectSystemTable,
  toRowsResult,
  type BindValues,
  type PreparedShape,
  type SelectContext,
  type SelectResult,
} from './system-select.js';
export { diffViews, type ClusterEvent } from './events.js';
export { MembershipTracker, type MembershipTrackerOptions, type MembershipUpdate, type Timers } from './tracker.js';
