// One Apache Cassandra 5.0 node on 127.0.0.1, no authentication. See ../cassandra/node.mjs.
import { makeProfile } from '../cassandra/node.mjs';

export const name = 'cassandra';
export const { build, up, down, restart } = makeProfile({ name, nodes: 1 });

/** cqlsh from PyPI, installed into the cache on first call; see ../cassandra/cqlsh.mjs. */
export { cqlshPath } from '../cassandra/cqlsh.mjs';
