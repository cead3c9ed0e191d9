import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import com.datastax.oss.driver.internal.core.context.InternalDriverContext;
import com.datastax.oss.driver.internal.core.metadata.NodeInfo;
import com.datastax.oss.driver.internal.core.metadata.TopologyMonitor;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Connects the Java driver 4.x through the proxies and prints what it saw as one JSON line.
 *
 * <p>Usage: DriverCheck HOST:PORT DATACENTER EXPECTED_NODES [PROTOCOL]. The key check is the
 * driver's own node refresh (TopologyMonitor.refreshNode): for a peer it runs {@code SELECT * FROM
 * system.peers_v2 WHERE peer = :address AND peer_port = :port} (or the v1 form) and takes the
 * first row, so a proxy that ignored WHERE would hand back another node's row. (The control node
 * itself is never refreshed that way: the driver answers "absent" for it without a query.)
 */
public final class DriverCheck {
  public static void main(String[] args) throws Exception {
    String[] contact = args[0].split(":");
    String dc = args[1];
    int expected = Integer.parseInt(args[2]);
    Map<String, Object> out = new LinkedHashMap<>();
    var config = DriverConfigLoader.programmaticBuilder()
        .withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(5))
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, Duration.ofSeconds(5));
    if (args.length > 3 && !args[3].equals("auto")) config = config.withString(DefaultDriverOption.PROTOCOL_VERSION, args[3]);
    long started = System.nanoTime();
    try (CqlSession session = CqlSession.builder()
        .addContactPoint(new InetSocketAddress(contact[0], Integer.parseInt(contact[1])))
        .withLocalDatacenter(dc)
        .withConfigLoader(config.build())
        .build()) {
      out.put("connectMs", (System.nanoTime() - started) / 1_000_000);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (System.nanoTime() < deadline) {
        Collection<Node> nodes = session.getMetadata().getNodes().values();
        if (nodes.size() >= expected && nodes.stream().allMatch(n -> n.getState() == NodeState.UP && n.getOpenConnections() > 0)) break;
        Thread.sleep(100);
      }
      out.put("readyMs", (System.nanoTime() - started) / 1_000_000);
      out.put("protocolVersion", session.getContext().getProtocolVersion().getCode());
      InternalDriverContext context = (InternalDriverContext) session.getContext();
      TopologyMonitor monitor = context.getTopologyMonitor();
      out.put("usesPeersV2", peersV2(monitor));
      out.put("controlNode", endpoint(context.getControlConnection().channel().getEndPoint().resolve()));

      List<Map<String, Object>> nodes = new ArrayList<>();
      Map<String, Object> refreshed = new TreeMap<>();
      for (Node node : session.getMetadata().getNodes().values()) {
        Map<String, Object> n = new LinkedHashMap<>();
        String endpoint = endpoint(node.getEndPoint().resolve());
        n.put("endpoint", endpoint);
        n.put("hostId", String.valueOf(node.getHostId()));
        n.put("dc", node.getDatacenter());
        n.put("state", node.getState().name());
        n.put("openConnections", node.getOpenConnections());
        n.put("broadcast", node.getBroadcastAddress().map(DriverCheck::endpoint).orElse(null));
        nodes.add(n);
        // The driver's own single-node refresh, as after an UP event.
        Optional<NodeInfo> info = monitor.refreshNode(node).toCompletableFuture().get(10, TimeUnit.SECONDS);
        refreshed.put(endpoint, info.map(i -> {
          Map<String, Object> r = new LinkedHashMap<>();
          r.put("hostId", String.valueOf(i.getHostId()));
          r.put("endpoint", endpoint(i.getEndPoint().resolve()));
          r.put("broadcast", i.getBroadcastAddress().map(DriverCheck::endpoint).orElse(null));
          return (Object) r;
        }).orElse("absent"));
      }
      nodes.sort((a, b) -> String.valueOf(a.get("endpoint")).compareTo(String.valueOf(b.get("endpoint"))));
      out.put("nodes", nodes);
      out.put("refreshed", refreshed);

      Map<String, Object> coordinators = new TreeMap<>();
      for (int i = 0; i < 30; i++) {
        ResultSet rs = session.execute("SELECT host_id FROM system.local");
        Row row = rs.one();
        coordinators.put(endpoint(rs.getExecutionInfo().getCoordinator().getEndPoint().resolve()), String.valueOf(row.getUuid("host_id")));
      }
      out.put("coordinators", coordinators);
      List<String> keyspaces = new ArrayList<>();
      for (Row row : session.execute("SELECT keyspace_name FROM system_schema.keyspaces")) keyspaces.add(row.getString("keyspace_name"));
      keyspaces.sort(null);
      out.put("keyspaces", keyspaces);
      long agreement = System.nanoTime();
      out.put("schemaAgreement", session.checkSchemaAgreement());
      out.put("schemaAgreementMs", (System.nanoTime() - agreement) / 1_000_000);
      try {
        session.refreshSchema();
      } catch (RuntimeException e) {
        out.put("schemaRefreshError", e.toString());
      }
      PreparedStatement byPeer = session.prepare("SELECT peer, host_id FROM system.peers_v2 WHERE peer = :address AND peer_port = :port");
      out.put("preparedVariables", byPeer.getVariableDefinitions().size());
    } catch (Exception error) {
      StringWriter trace = new StringWriter();
      error.printStackTrace(new PrintWriter(trace));
      out.put("error", error.toString());
      out.put("trace", trace.toString().substring(0, Math.min(3000, trace.toString().length())));
    }
    System.out.println(new ObjectMapper().writeValueAsString(out));
    System.exit(0);
  }

  private static String endpoint(Object address) {
    InetSocketAddress a = (InetSocketAddress) address;
    return a.getAddress().getHostAddress() + ":" + a.getPort();
  }

  /** Whether the topology monitor settled on system.peers_v2 (a private flag; null if unreadable). */
  private static Object peersV2(TopologyMonitor monitor) {
    for (Class<?> c = monitor.getClass(); c != null; c = c.getSuperclass()) {
      try {
        Field f = c.getDeclaredField("isSchemaV2");
        f.setAccessible(true);
        return f.get(monitor);
      } catch (NoSuchFieldException e) {
        // look in the superclass
      } catch (ReflectiveOperationException | RuntimeException e) {
        return null;
      }
    }
    return null;
  }
}
