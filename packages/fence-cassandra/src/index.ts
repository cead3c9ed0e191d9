export { CassandraFence, type CassandraFenceOptions, type FencedStatement, type FenceLease } from './cassandra-fence.js';
export { FenceOutcomeUnknownError, StaleTokenError } from './errors.js';
