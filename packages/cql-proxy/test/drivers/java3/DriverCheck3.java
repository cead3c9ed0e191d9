// The DataStax Java driver 3.x (cassandra-driver-core) through the proxies. It builds its metadata
// from system.local and system.peers_v2, or system.peers where peers_v2 is refused (a pre-4.0
// server), with TokenAwarePolicy over DCAwareRoundRobinPolicy, and reads commands on stdin, one JSON
// line out per command, so a test can stop and start proxies between commands.
//
//   report KS     hosts (address, host id, DC, rack, tokens, up), the host events it got, the
//                 keyspaces and KS's tables from its schema metadata, the replicas of KS's key 1
//   work KS N     N token-aware prepared writes and reads, who coordinated them, and system.local
//                 read on each host (each proxy must answer about itself)
//   quit
//
// Usage: DriverCheck3 HOST PORT DATACENTER PROTOCOL(auto|V3|V4) COMPRESSION(NONE|LZ4|SNAPPY)
import com.datastax.driver.core.*;
import com.datastax.driver.core.policies.DCAwareRoundRobinPolicy;
import com.datastax.driver.core.policies.TokenAwarePolicy;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.util.*;
import java.util.concurrent.ConcurrentHashMap;

public class DriverCheck3 {
  static final Map<String, Integer> events = new ConcurrentHashMap<>();

  static String q(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String at(Host h) {
    return h.getEndPoint().resolve().getAddress().getHostAddress() + ":" + h.getEndPoint().resolve().getPort();
  }

  static String counts(Map<String, Integer> m) {
    StringJoiner j = new StringJoiner(",", "{", "}");
    new TreeMap<>(m).forEach((k, v) -> j.add(q(k) + ":" + v));
    return j.toString();
  }

  static String list(Collection<String> items) {
    StringJoiner j = new StringJoiner(",", "[", "]");
    for (String s : new TreeSet<>(items)) j.add(q(s));
    return j.toString();
  }

  static void count(String what, Host h) {
    events.merge(what + " " + at(h), 1, Integer::sum);
  }

  public static void main(String[] args) throws Exception {
    Cluster.Builder builder =
        Cluster.builder()
            .addContactPoint(args[0])
            .withPort(Integer.parseInt(args[1]))
            .withLoadBalancingPolicy(new TokenAwarePolicy(DCAwareRoundRobinPolicy.builder().withLocalDc(args[2]).build()))
            .withCompression(ProtocolOptions.Compression.valueOf(args[4]))
            .withSocketOptions(new SocketOptions().setConnectTimeoutMillis(10000).setReadTimeoutMillis(15000))
            .withoutJMXReporting();
    if (!args[3].equals("auto")) builder.withProtocolVersion(ProtocolVersion.valueOf(args[3]));
    Cluster cluster = builder.build();
    cluster.register(
        new Host.StateListener() {
          public void onAdd(Host h) { count("add", h); }
          public void onUp(Host h) { count("up", h); }
          public void onDown(Host h) { count("down", h); }
          public void onRemove(Host h) { count("remove", h); }
          public void onRegister(Cluster c) {}
          public void onUnregister(Cluster c) {}
        });
    Session session;
    try {
      session = cluster.connect();
    } catch (Exception e) {
      System.out.println("{\"connected\":false,\"error\":" + q(e.toString()) + "}");
      cluster.close();
      System.exit(1);
      return;
    }
    ProtocolVersion version = cluster.getConfiguration().getProtocolOptions().getProtocolVersion();
    System.out.println("{\"connected\":true,\"protocolVersion\":" + q(version.name()) + "}");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      String[] f = line.trim().split("\\s+");
      try {
        if (f[0].equals("report")) System.out.println(report(cluster, f.length > 1 ? f[1] : null));
        else if (f[0].equals("work")) System.out.println(work(cluster, session, f[1], Integer.parseInt(f[2])));
        else if (f[0].equals("quit")) break;
        else System.out.println("{\"error\":" + q("unknown command " + f[0]) + "}");
      } catch (Exception e) {
        System.out.println("{\"error\":" + q(e.toString()) + "}");
      }
      System.out.flush();
    }
    cluster.close();
    System.exit(0);
  }

  static String report(Cluster cluster, String keyspace) {
    Metadata meta = cluster.getMetadata();
    StringJoiner nodes = new StringJoiner(",", "[", "]");
    List<Host> hosts = new ArrayList<>(meta.getAllHosts());
    hosts.sort(Comparator.comparing(DriverCheck3::at));
    for (Host h : hosts) {
      nodes.add(
          "{\"address\":" + q(at(h)) + ",\"hostId\":" + q(String.valueOf(h.getHostId())) + ",\"dc\":" + q(h.getDatacenter())
              + ",\"rack\":" + q(h.getRack()) + ",\"tokens\":" + h.getTokens().size() + ",\"up\":" + h.isUp()
              + ",\"broadcast\":" + q(h.getBroadcastSocketAddress() == null ? null : h.getBroadcastSocketAddress().getAddress().getHostAddress())
              + ",\"listen\":" + q(h.getListenSocketAddress() == null ? null : h.getListenSocketAddress().getAddress().getHostAddress()) + "}");
    }
    List<String> keyspaces = new ArrayList<>();
    for (KeyspaceMetadata k : meta.getKeyspaces()) keyspaces.add(k.getName());
    List<String> tables = new ArrayList<>();
    List<String> replicas = new ArrayList<>();
    if (keyspace != null && meta.getKeyspace(keyspace) != null) {
      for (TableMetadata t : meta.getKeyspace(keyspace).getTables()) tables.add(t.getName());
      ByteBuffer key = ByteBuffer.allocate(4).putInt(0, 1);
      for (Host h : meta.getReplicas(keyspace, key)) replicas.add(at(h));
    }
    return "{\"clusterName\":" + q(meta.getClusterName()) + ",\"partitioner\":" + q(meta.getPartitioner()) + ",\"nodes\":" + nodes
        + ",\"tokenRanges\":" + meta.getTokenRanges().size() + ",\"events\":" + counts(events) + ",\"keyspaces\":" + list(keyspaces)
        + ",\"tables\":" + list(tables) + ",\"replicas\":" + list(replicas) + ",\"schemaAgreement\":" + meta.checkSchemaAgreement() + "}";
  }

  static String work(Cluster cluster, Session session, String keyspace, int n) {
    Map<String, Integer> coordinators = new HashMap<>();
    Map<String, String> local = new TreeMap<>();
    List<String> errors = new ArrayList<>();
    int ok = 0;
    session.execute("CREATE KEYSPACE IF NOT EXISTS " + keyspace + " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
    session.execute("CREATE TABLE IF NOT EXISTS " + keyspace + ".kv (k int PRIMARY KEY, v text)");
    PreparedStatement insert = session.prepare("INSERT INTO " + keyspace + ".kv (k, v) VALUES (?, ?)");
    PreparedStatement select = session.prepare("SELECT v FROM " + keyspace + ".kv WHERE k = ?");
    for (int i = 0; i < n; i++) {
      try {
        session.execute(insert.bind(i, "v" + i));
        ResultSet rs = session.execute(select.bind(i));
        Row row = rs.one();
        if (row == null || !("v" + i).equals(row.getString("v"))) errors.add("k=" + i + " read " + (row == null ? "nothing" : row.getString("v")));
        else ok++;
        coordinators.merge(at(rs.getExecutionInfo().getQueriedHost()), 1, Integer::sum);
      } catch (Exception e) {
        errors.add(e.toString());
      }
    }
    for (Host h : cluster.getMetadata().getAllHosts()) {
      if (!h.isUp()) continue;
      try {
        Statement st = new SimpleStatement("SELECT host_id FROM system.local").setHost(h);
        local.put(at(h), String.valueOf(session.execute(st).one().getUUID("host_id")));
      } catch (Exception e) {
        errors.add("system.local on " + at(h) + ": " + e);
      }
    }
    StringJoiner l = new StringJoiner(",", "{", "}");
    local.forEach((k, v) -> l.add(q(k) + ":" + q(v)));
    StringJoiner errs = new StringJoiner(",", "[", "]");
    for (String e : errors) errs.add(q(e));
    return "{\"ok\":" + ok + ",\"coordinators\":" + counts(coordinators) + ",\"localHostIds\":" + l + ",\"errors\":" + errs + "}";
  }
}
