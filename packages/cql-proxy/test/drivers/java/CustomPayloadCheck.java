import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the system tables through the proxy with {@code setCustomPayload} on every statement (the
 * frame's 0x04 flag, the payload map in front of the statement) and prints what came back as one
 * JSON line. Usage: CustomPayloadCheck HOST:PORT DATACENTER.
 */
public final class CustomPayloadCheck {
  private static final Map<String, ByteBuffer> PAYLOAD =
      Map.of("muster-probe", ByteBuffer.wrap("custom payload".getBytes(StandardCharsets.UTF_8)));

  public static void main(String[] args) throws Exception {
    String[] contact = args[0].split(":");
    Map<String, Object> out = new LinkedHashMap<>();
    var config = DriverConfigLoader.programmaticBuilder()
        .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(10))
        .withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, Duration.ofSeconds(5));
    try (CqlSession session = CqlSession.builder()
        .addContactPoint(new InetSocketAddress(contact[0], Integer.parseInt(contact[1])))
        .withLocalDatacenter(args[1])
        .withConfigLoader(config.build())
        .build()) {
      out.put("protocolVersion", session.getContext().getProtocolVersion().getCode());
      out.put("local", rows(session, SimpleStatement.newInstance("SELECT rpc_address, host_id, tokens FROM system.local").setCustomPayload(PAYLOAD)));
      out.put("peersV2", rows(session, SimpleStatement.newInstance("SELECT peer, native_address, host_id FROM system.peers_v2").setCustomPayload(PAYLOAD)));
      PreparedStatement prepared = session.prepare(
          SimpleStatement.newInstance("SELECT rpc_address, host_id, tokens FROM system.local WHERE key = ?").setCustomPayload(PAYLOAD));
      out.put("preparedLocal", rows(session, prepared.bind("local").setCustomPayload(PAYLOAD)));
      try {
        session.execute(SimpleStatement.newInstance("SELECT * FROM system_views.gossip_info").setCustomPayload(PAYLOAD));
        out.put("gossip", "answered");
      } catch (RuntimeException refused) {
        out.put("gossip", refused.getClass().getSimpleName() + ": " + refused.getMessage());
      }
    } catch (Exception error) {
      out.put("error", error.getClass().getName() + ": " + error.getMessage());
    }
    System.out.println(new ObjectMapper().writeValueAsString(out));
  }

  private static List<Map<String, String>> rows(CqlSession session, com.datastax.oss.driver.api.core.cql.Statement<?> statement) {
    List<Map<String, String>> rows = new ArrayList<>();
    for (Row row : session.execute(statement)) {
      Map<String, String> r = new LinkedHashMap<>();
      for (int i = 0; i < row.getColumnDefinitions().size(); i++) {
        r.put(row.getColumnDefinitions().get(i).getName().asInternal(), String.valueOf(row.getObject(i)));
      }
      rows.add(r);
    }
    return rows;
  }
}
