// Discovery conformance faults played on a loopback TCP proxy (tcp-proxy.mjs) that stands between
// the clients under test and a shared server: an outage cuts the clients off without touching the
// server other test files use, a restart breaks every connection while `during` changes membership.
// The suite's own operator client talks to the server directly, so its changes still land.

/** The `outage` and `restart` members of a DiscoveryControl, on `proxy`. */
export function proxyFaults(proxy) {
  let acceptedAtBegin = 0;
  const cut = () => {
    proxy.refuse(true);
    proxy.dropConnections();
  };
  return {
    outage: {
      begin: async () => {
        acceptedAtBegin = proxy.accepted;
        cut();
      },
      end: async () => proxy.refuse(false),
      // Each connection the clients try while refused is accepted, then reset: one failed attempt.
      attempts: () => proxy.accepted - acceptedAtBegin,
    },
    restart: async (during) => {
      cut();
      try {
        await during();
      } finally {
        proxy.refuse(false);
      }
    },
  };
}

/**
 * The conformance kit's `hang` on `proxy`: the clients behind it get no answer and no error (a
 * paused server) until `end()`, when what they sent meanwhile reaches the server late.
 */
export function proxyHang(proxy) {
  return {
    begin: async () => proxy.hold(true),
    end: async () => proxy.hold(false),
  };
}
