/**
 * Which drivers a draining instance must close the connections of itself, early and one at a
 * quiet moment, instead of letting them leave: told by the DRIVER_NAME their STARTUP carries.
 *
 * gocql (1.x, with its defaults) stops using a host only by closing its pool there, and that close
 * fails at once whatever is in flight on it, with no retry (query_executor.go: `rt == nil`):
 * - a STATUS_CHANGE DOWN, 1 s after it arrives (events.go, `eventDebounceTime`): handleNodeDown →
 *   pool.removeHost → `go pool.Close()` → Conn.Close → closeWithError(nil) → `c.cancel()`, and
 *   every exec waiting there returns ErrConnectionClosed (conn.go);
 * - a ring refresh that no longer lists the host (host_source.go refreshRing → Session.removeHost),
 *   the same close;
 * - and it hears neither while its control connection is on the draining instance itself: peers'
 *   events do not reach it there, and the instance's own system.local still lists it.
 * The one way it stops sending to a host without failing anything is that host closing each
 * connection while nothing is in flight on it: the pool drops the connection (connectionpool.go
 * HandleError), its refill is refused (the drain refuses new clients), Pick returns nil for an
 * empty pool, and the executor moves the next query to the next host. Done before the peers' DOWN
 * reaches the driver (a probe interval plus two debounces), the pool is empty when it closes it.
 * What remains is the request the driver picks the connection for in the instant between the FIN
 * leaving here and its reader seeing it (README, Drain).
 *
 * cassandra-driver and the Python driver leave on their own without a loss (leaving.ts); closing
 * theirs early would only add that instant's risk, so they are not listed.
 */
export function closedEarlyOnDrain(driverName: string | undefined): boolean {
  return driverName !== undefined && /gocql/i.test(driverName);
}
