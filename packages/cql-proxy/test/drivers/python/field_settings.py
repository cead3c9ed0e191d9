"""Runs what applications do, with settings the other checks leave at their defaults, through the proxies.

Usage: field_settings.py HOST:PORT DATACENTER PROTOCOL COMPRESSION KEYSPACE (created with replication factor 3)
COMPRESSION is lz4 or snappy. Prints one JSON line: what each step returned, or its error. The
session is token-aware over DC-aware round robin, at QUORUM, with speculative execution; the
steps: USING TIMESTAMP, a counter, a UDT, a tuple, a duration and a vector, an 8 MiB blob, a
server-side warning, paging carried from one proxy to the next (simple and prepared), LWT with a
serial consistency, and a session whose local DC does not exist.
"""

import json
import sys
import time
import traceback
from collections import namedtuple

import cassandra
from cassandra import ConsistencyLevel
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import ConstantSpeculativeExecutionPolicy, DCAwareRoundRobinPolicy, TokenAwarePolicy
from cassandra.query import BatchStatement, BatchType, SimpleStatement
from cassandra.util import Duration

Address = namedtuple("Address", "street zip")


def main():
    contact, dc, protocol, compression, ks = sys.argv[1:6]
    host, port = contact.rsplit(":", 1)
    out = {"driver": cassandra.__version__}

    def cluster_for(local_dc):
        profile = ExecutionProfile(
            load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc=local_dc)),
            consistency_level=ConsistencyLevel.QUORUM,
            speculative_execution_policy=ConstantSpeculativeExecutionPolicy(0.05, 2),
            request_timeout=20,
        )
        return Cluster(
            contact_points=[host],
            port=int(port),
            protocol_version=int(protocol),
            compression=compression,
            execution_profiles={EXEC_PROFILE_DEFAULT: profile},
            connect_timeout=5,
            control_connection_timeout=5,
        )

    cluster = cluster_for(dc)
    try:
        session = cluster.connect()
        session.execute(f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 3}}")
        connection = cluster.control_connection._connection
        out["protocolVersion"] = cluster.protocol_version
        out["compressed"] = connection.compressor is not None
        out["hosts"] = sorted(
            ({"endpoint": f"{h.endpoint.address}:{h.endpoint.port}", "hostId": str(h.host_id), "dc": h.datacenter} for h in cluster.metadata.all_hosts()),
            key=lambda h: h["endpoint"],
        )
        for statement in (
            f"CREATE TYPE IF NOT EXISTS {ks}.address (street text, zip int)",
            f"CREATE TABLE IF NOT EXISTS {ks}.rows (k int, c int, v text, PRIMARY KEY (k, c))",
            f"CREATE TABLE IF NOT EXISTS {ks}.counts (k int PRIMARY KEY, n counter)",
            f"CREATE TABLE IF NOT EXISTS {ks}.kinds (k int PRIMARY KEY, a frozen<address>, t tuple<int, text>, d duration, vec vector<float, 3>, b blob)",
            f"CREATE TABLE IF NOT EXISTS {ks}.cas (k int PRIMARY KEY, v int)",
        ):
            session.execute(statement)
        cluster.register_user_type(ks, "address", Address)
        steps = {
            "usingTimestamp": lambda: using_timestamp(session, ks),
            "counter": lambda: counter(session, ks),
            "kinds": lambda: kinds(session, ks),
            "blob": lambda: blob(session, ks),
            "warnings": lambda: warnings(session, ks),
            "paging": lambda: paging(cluster, session, ks),
            "lwt": lambda: lwt(session, ks),
        }
        for name, step in steps.items():
            try:
                out[name] = step()
            except Exception as error:  # reported, the caller asserts on it
                out[name] = {"error": f"{type(error).__name__}: {error}"[:1000]}
    except Exception as error:
        out["error"] = f"{type(error).__name__}: {error}"
        out["trace"] = traceback.format_exc()[-2000:]
    finally:
        cluster.shutdown()

    elsewhere = cluster_for("nowhere")
    try:
        elsewhere.connect().execute("SELECT key FROM system.local")
        out["wrongDc"] = "connected"
    except Exception as error:
        out["wrongDc"] = f"{type(error).__name__}: {error}"
    finally:
        elsewhere.shutdown()
    print(json.dumps(out, default=str))


def using_timestamp(session, ks):
    session.execute(f"INSERT INTO {ks}.rows (k, c, v) VALUES (1, 1, 'x') USING TIMESTAMP 4242")
    return session.execute(f"SELECT writetime(v) FROM {ks}.rows WHERE k = 1 AND c = 1").one()[0]


def counter(session, ks):
    add = session.prepare(f"UPDATE {ks}.counts SET n = n + ? WHERE k = 1")
    before = session.execute(f"SELECT n FROM {ks}.counts WHERE k = 1").one()
    session.execute(add, [5])
    return session.execute(f"SELECT n FROM {ks}.counts WHERE k = 1").one()[0] - (before[0] if before else 0)


def kinds(session, ks):
    insert = session.prepare(f"INSERT INTO {ks}.kinds (k, a, t, d, vec) VALUES (?, ?, ?, ?, ?)")
    session.execute(insert, [1, Address("main", 7), (2, "b"), Duration(1, 2, 3_000_000_000), [1.5, 2.5, 3.5]])
    row = session.execute(f"SELECT a, t, d, vec FROM {ks}.kinds WHERE k = 1").one()
    return {"a": list(row.a), "t": list(row.t), "d": [row.d.months, row.d.days, row.d.nanoseconds], "vec": list(row.vec)}


def blob(session, ks):
    value = bytes(range(256)) * (32 * 1024)  # 8 MiB
    session.execute(session.prepare(f"INSERT INTO {ks}.kinds (k, b) VALUES (2, ?)"), [value])
    read = session.execute(session.prepare(f"SELECT b FROM {ks}.kinds WHERE k = ?"), [2]).one()[0]
    return {"length": len(read), "same": read == value}


def warnings(session, ks):
    batch = BatchStatement(batch_type=BatchType.UNLOGGED)
    for k in range(3):  # over batch_size_warn_threshold (5 KiB), several partitions
        batch.add(f"INSERT INTO {ks}.rows (k, c, v) VALUES (%s, 1, %s)", (100 + k, "w" * 6000))
    return session.execute(batch).response_future.warnings


def paging(cluster, session, ks):
    insert = session.prepare(f"INSERT INTO {ks}.rows (k, c, v) VALUES (5, ?, 'p')")
    for c in range(25):
        session.execute(insert, [c])
    hosts = sorted(cluster.metadata.all_hosts(), key=lambda h: (h.endpoint.address, h.endpoint.port))
    simple = SimpleStatement(f"SELECT c FROM {ks}.rows WHERE k = 5", fetch_size=10)
    prepared = session.prepare(f"SELECT c FROM {ks}.rows WHERE k = ?")
    prepared.fetch_size = 10
    out = {}
    for name, statement, values in (("simple", simple, None), ("prepared", prepared, [5])):
        rows, coordinators, state = [], [], None
        for page in range(3):
            result = session.execute(statement, values, paging_state=state, host=hosts[page % len(hosts)])
            rows += [r.c for r in result.current_rows]
            where = result.response_future.coordinator_host.endpoint
            coordinators.append(f"{where.address}:{where.port}")
            state = result.paging_state
            if state is None:
                break
        out[name] = {"rows": rows, "coordinators": coordinators}
    return out


def lwt(session, ks):
    k = int(time.time() * 1000) % 1_000_000_000
    insert = SimpleStatement(f"INSERT INTO {ks}.cas (k, v) VALUES (%s, 1) IF NOT EXISTS", serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL)
    first, again = session.execute(insert, [k]), session.execute(insert, [k])
    update = session.prepare(f"UPDATE {ks}.cas SET v = ? WHERE k = ? IF v = ?")
    update.serial_consistency_level = ConsistencyLevel.SERIAL
    swapped = session.execute(update, [2, k, 1]).was_applied
    stale = session.execute(update, [3, k, 1])
    read = SimpleStatement(f"SELECT v FROM {ks}.cas WHERE k = %s", consistency_level=ConsistencyLevel.SERIAL)
    return {
        "applied": [first.was_applied, again.was_applied, swapped, stale.was_applied],
        "existing": list(again.one()),
        "read": session.execute(read, [k]).one()[0],
    }


if __name__ == "__main__":
    main()
