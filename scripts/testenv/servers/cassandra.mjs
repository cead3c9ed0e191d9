// One Apache Cassandra 5.0 node on 127.0.0.1, no authentication. See ../cassandra/node.mjs.
import { makeProfile } from '../cassandra/node.mjs';

export const name = 'cassandra';
export const { build, up, down, restart } = makeProfile({ name, nodes: 1 });
