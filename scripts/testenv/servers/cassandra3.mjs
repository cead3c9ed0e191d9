// Three Apache Cassandra 5.0 nodes on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (one native port for all),
// fixed tokens, no bootstrap, started one after another. See ../cassandra/node.mjs.
// MUSTER_CASSANDRA_ADDRESS_BASE=127.0.1. puts a private copy (for fault tests) on 127.0.1.1-3.
import { makeProfile } from '../cassandra/node.mjs';

export const name = 'cassandra3';
export const { build, up, down, restart, restartNode } = makeProfile({ name, nodes: 3 });
