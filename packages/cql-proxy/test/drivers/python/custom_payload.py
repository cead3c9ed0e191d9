"""Reads the system tables through the proxy with a custom payload on every request, as one JSON line.

Usage: custom_payload.py HOST:PORT DATACENTER PROTOCOL
The Python cassandra-driver sets the frame's custom-payload flag (0x04) and puts the payload map in
front of the statement, for QUERY, PREPARE and EXECUTE alike.
"""

import json
import sys
import traceback

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
from cassandra.policies import DCAwareRoundRobinPolicy

PAYLOAD = {"muster-probe": b"custom payload", "dse.extra": b"\x00\x01"}


def rows(result):
    return [{k: str(v) for k, v in row._asdict().items()} for row in result]


def main():
    contact, dc, protocol = sys.argv[1], sys.argv[2], int(sys.argv[3])
    host, port = contact.rsplit(":", 1)
    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(local_dc=dc), request_timeout=10)
    cluster = Cluster(
        contact_points=[host],
        port=int(port),
        protocol_version=protocol,
        execution_profiles={EXEC_PROFILE_DEFAULT: profile},
        connect_timeout=5,
        control_connection_timeout=5,
    )
    out = {}
    try:
        session = cluster.connect()
        out["protocolVersion"] = cluster.protocol_version
        out["local"] = rows(session.execute("SELECT rpc_address, host_id, tokens FROM system.local", custom_payload=PAYLOAD))
        out["peers"] = rows(session.execute("SELECT peer, host_id, tokens FROM system.peers", custom_payload=PAYLOAD))
        out["peersV2"] = rows(session.execute("SELECT peer, native_address, host_id FROM system.peers_v2", custom_payload=PAYLOAD))
        prepared = session.prepare("SELECT rpc_address, host_id, tokens FROM system.local WHERE key = ?", custom_payload=PAYLOAD)
        out["preparedLocal"] = rows(session.execute(prepared, ["local"], custom_payload=PAYLOAD))
        out["forwarded"] = sorted(
            r.keyspace_name for r in session.execute("SELECT keyspace_name FROM system_schema.keyspaces", custom_payload=PAYLOAD)
        )
        try:
            session.execute("SELECT * FROM system_views.gossip_info", custom_payload=PAYLOAD)
            out["gossip"] = "answered"
        except Exception as error:  # the refusal is the expected outcome
            out["gossip"] = f"{type(error).__name__}: {error}"
    except Exception as error:
        out["error"] = f"{type(error).__name__}: {error}"
        out["trace"] = traceback.format_exc()
    finally:
        cluster.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
