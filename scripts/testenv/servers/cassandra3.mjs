// Three Apache Cassandra 5.0 nodes on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (one native port for all),
// fixed tokens, no bootstrap, started one after another. See ../cassandra/node.mjs.
import { makeProfile } from '../cassandra/node.mjs';

export const name = 'cassandra3';
export const { build, up, down, restart } = makeProfile({ name, nodes: 3 });
