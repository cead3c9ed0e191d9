"""Sends a steady load through the proxies with the driver's defaults, until stdin closes.

Usage: steady_load.py HOST:PORT RATE
Defaults on purpose: statements are not idempotent and the default retry policy applies, as in an
application that never tuned them. Prints one JSON line whenever the set of hosts the session has
open pools to changes ({"hosts": [...]}), and at the end {"ok": N, "failed": N, "kinds": {error
class: N}, "errors": [the first 20]}.
"""

import json
import sys
import threading
import time

from cassandra.cluster import Cluster
from cassandra.query import SimpleStatement



_out = threading.Lock()


def emit(message):
    """One JSON line; two threads print, and print() writes the text and the newline apart."""
    with _out:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

def main():
    contact, rate = sys.argv[1], float(sys.argv[2])
    host, port = contact.rsplit(":", 1)
    cluster = Cluster(contact_points=[host], port=int(port))
    session = cluster.connect()
    insert = SimpleStatement("INSERT INTO muster_drain.kv (k, v) VALUES (%s, %s)")
    lock = threading.Lock()
    counts = {"ok": 0, "failed": 0, "errors": [], "kinds": {}}
    pending = [0]
    stop = threading.Event()

    def done(_rows):
        with lock:
            counts["ok"] += 1
            pending[0] -= 1

    def failed(error):
        with lock:
            counts["failed"] += 1
            kind = type(error).__name__
            counts["kinds"][kind] = counts["kinds"].get(kind, 0) + 1
            pending[0] -= 1
            if len(counts["errors"]) < 20:
                counts["errors"].append(f"{type(error).__name__}: {error}")

    def watch_hosts():
        seen = None
        while not stop.is_set():
            state = session.get_pool_state()
            hosts = sorted(f"{h.endpoint.address}:{h.endpoint.port}" for h, s in state.items() if s and s.get("open_count", 0) > 0)
            if hosts != seen:
                seen = hosts
                emit({"hosts": hosts})
            time.sleep(0.05)

    threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
    watcher = threading.Thread(target=watch_hosts, daemon=True)
    watcher.start()
    emit({"started": True})
    i = 0
    next_at = time.monotonic()
    while not stop.is_set():
        i += 1
        with lock:
            pending[0] += 1
        future = session.execute_async(insert, (i % 1000, i))
        future.add_callbacks(done, failed)
        next_at += 1.0 / rate
        time.sleep(max(0.0, next_at - time.monotonic()))
    deadline = time.monotonic() + 30
    while pending[0] > 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    with lock:
        counts["unanswered"] = pending[0]
        emit(counts)
    cluster.shutdown()


if __name__ == "__main__":
    main()
