// One Apache Cassandra 5.0 node on 127.0.0.1 with PasswordAuthenticator and CassandraAuthorizer;
// the entry carries the superuser's username/password. See ../cassandra/node.mjs.
import { makeProfile } from '../cassandra/node.mjs';

export const name = 'cassandra-auth';
export const { build, up, down, restart } = makeProfile({ name, nodes: 1, auth: true });
