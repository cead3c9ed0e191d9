"""Connects the Python cassandra-driver through the proxies and prints what it saw, as one JSON line.

Usage: check_cluster.py HOST:PORT DATACENTER PROTOCOL EXPECTED_HOSTS
PROTOCOL is a protocol version number, or "auto" to let the driver negotiate.
Anything the driver raises is reported in the JSON ("error"), never as a traceback only.
"""

import json
import sys
import time
import traceback

import cassandra
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import DCAwareRoundRobinPolicy


def main():
    contact, dc, protocol, expected = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    host, port = contact.rsplit(":", 1)
    options = {}
    if protocol != "auto":
        options["protocol_version"] = int(protocol)
    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(local_dc=dc), request_timeout=10)
    cluster = Cluster(
        contact_points=[host],
        port=int(port),
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=5,
        control_connection_timeout=5,
        **options,
    )
    out = {"driver": cassandra.__version__, "requested": protocol}
    try:
        session = cluster.connect()
        deadline = time.time() + 20
        while time.time() < deadline:
            up = [h for h in cluster.metadata.all_hosts() if h.is_up]
            if len(up) >= expected and all(session.get_pool_state().get(h) for h in up):
                break
            time.sleep(0.1)
        out["protocolVersion"] = cluster.protocol_version
        out["usesPeersV2"] = cluster.control_connection._uses_peers_v2
        out["hosts"] = sorted(
            (
                {
                    "address": h.endpoint.address,
                    "port": h.endpoint.port,
                    "hostId": str(h.host_id),
                    "dc": h.datacenter,
                    "rack": h.rack,
                    "up": bool(h.is_up),
                    "release": h.release_version,
                }
                for h in cluster.metadata.all_hosts()
            ),
            key=lambda h: (h["address"], h["port"]),
        )
        out["ring"] = len(cluster.metadata.token_map.ring) if cluster.metadata.token_map else 0
        # Requests spread over every host: each answers system.local about itself.
        coordinators = {}
        for _ in range(30):
            rs = session.execute("SELECT host_id, rpc_address FROM system.local")
            row = rs.one()
            where = rs.response_future.coordinator_host.endpoint
            coordinators[f"{where.address}:{where.port}"] = str(row.host_id)
        out["coordinators"] = coordinators
        out["keyspaces"] = sorted(r.keyspace_name for r in session.execute("SELECT keyspace_name FROM system_schema.keyspaces"))
        prepared = session.prepare("SELECT peer, host_id FROM system.peers WHERE peer = ?")
        # Asked of each host in turn about every host: WHERE must pick the one row (none for itself).
        hosts = list(cluster.metadata.all_hosts())
        out["peerLookups"] = {
            f"{on.endpoint.address}:{on.endpoint.port}": {
                h.endpoint.address: [str(r.host_id) for r in session.execute(prepared, [h.endpoint.address], host=on)]
                for h in hosts
            }
            for on in hosts
        }
    except Exception as error:  # reported, the caller asserts on it
        out["error"] = f"{type(error).__name__}: {error}"
        out["trace"] = traceback.format_exc()[-2000:]
    finally:
        cluster.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
