// One Apache Cassandra 5.0 node on 127.0.0.1 with PasswordAuthenticator and CassandraAuthorizer,
// and client encryption that is optional (TLS and plain CQL on one port); the entry carries the
// superuser's username/password and the CA (tls.caFile). See ../cassandra/node.mjs.
import { makeProfile } from '../cassandra/node.mjs';

export const name = 'cassandra-auth';
export const { build, up, down, restart } = makeProfile({ name, nodes: 1, auth: true, tls: true });
