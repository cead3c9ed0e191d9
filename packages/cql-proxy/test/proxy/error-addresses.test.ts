// A backend ERROR that names replicas (v5 READ_FAILURE / WRITE_FAILURE reason maps, "from /ip:port"
// in messages) reaches the client with the proxy's address instead (issue 12, 3).
import { afterEach, describe, expect, it } from '@jest/globals';
import { decodeError, encodeError } from '../../src/protocol/error-message.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { Opcode } from '../../src/protocol/frame.js';
import { Consistency } from '../../src/protocol/consistency.js';
import { encodeQuery, encodeStartup } from '../../src/protocol/requests.js';
import { Reader } from '../../src/protocol/reader.js';
import { Writer } from '../../src/protocol/writer.js';
import { BackendConnectionError } from '../../src/proxy/backend-connection.js';
import { hideNodeAddresses } from '../../src/proxy/error-addresses.js';
import { RawClient } from './raw-client.js';
import { openBackend, REAL_NODE, scriptedProxy, type Script } from './scripted-backend.js';

/** READ_FAILURE as Cassandra 5.0 sends it in v5: two replicas failed. */
const readFailure = () =>
  encodeError({
    code: ErrorCode.READ_FAILURE,
    message:
      'Operation failed - received 0 responses and 2 failures: READ_TOO_MANY_TOMBSTONES from /10.9.8.7:7000, UNKNOWN from /10.9.8.6:7000',
    trailer: new Writer()
      .writeShort(Consistency.QUORUM)
      .writeInt(0)
      .writeInt(2)
      .writeInt(2)
      .writeInetAddr('10.9.8.7')
      .writeShort(1)
      .writeInetAddr('10.9.8.6')
      .writeShort(0)
      .writeByte(0)
      .finish(),
  });

describe('backend errors that name nodes', () => {
  it('v5 READ_FAILURE: the reason map and the message name the proxy, counts and reasons kept', () => {
    const out = decodeError(hideNodeAddresses(readFailure(), 5, '127.0.0.50'));
    expect(out.message).toBe(
      'Operation failed - received 0 responses and 2 failures: READ_TOO_MANY_TOMBSTONES from /127.0.0.50, UNKNOWN from /127.0.0.50',
    );
    const r = new Reader(out.trailer!);
    expect([r.readShort(), r.readInt(), r.readInt(), r.readInt()]).toEqual([Consistency.QUORUM, 0, 2, 2]);
    expect([r.readInetAddr(), r.readShort(), r.readInetAddr(), r.readShort(), r.readByte(), r.remaining]).toEqual([
      '127.0.0.50',
      1,
      '127.0.0.50',
      0,
      0,
      0,
    ]);
  });

  it('an error without addresses is passed on byte for byte', () => {
    const body = encodeError({ code: ErrorCode.INVALID, message: 'unconfigured table t' });
    expect(hideNodeAddresses(body, 5, '127.0.0.50')).toBe(body);
  });

  let close: (() => Promise<void>) | undefined;
  afterEach(() => close?.());

  /** What a client reads for `SELECT * FROM ks.t` through a proxy whose backend answers every QUERY with `answer`. */
  async function queryAnswered(answer: Awaited<ReturnType<Script>>, version: 4 | 5 = 4, consistency: Consistency = Consistency.ONE) {
    const proxy = await scriptedProxy((request) => (request.opcode === Opcode.QUERY ? answer : openBackend(request)));
    const client = await RawClient.open(proxy.address);
    close = async () => {
      client.close();
      await proxy.close();
    };
    client.send(version, 1, Opcode.STARTUP, encodeStartup({ options: new Map([['CQL_VERSION', '3.0.0']]) }));
    await client.next(1);
    if (version === 5) client.useSegments(false);
    client.send(version, 2, Opcode.QUERY, encodeQuery({ query: 'SELECT * FROM ks.t', parameters: { consistency } }, version));
    return client.next(2);
  }

  it('through a client connection', async () => {
    const frame = await queryAnswered({ opcode: Opcode.ERROR, body: readFailure() }, 5, Consistency.QUORUM);
    expect(frame?.opcode).toBe(Opcode.ERROR);
    expect(frame!.body.includes(Buffer.from('10.9.8.'))).toBe(false);
    expect(frame!.body.includes(Buffer.from([10, 9, 8]))).toBe(false);
    expect(decodeError(frame!.body).code).toBe(ErrorCode.READ_FAILURE);
  });

  it("a message quoting the node's sub-range query (a tombstone abort) or its host id: ring tokens and host ids hidden", async () => {
    // As Cassandra's TombstoneAbortException words it (read thresholds on), the query being the node's sub-range.
    const message =
      `2 nodes scanned over 100001 tombstones and aborted the query SELECT * FROM ks.t WHERE token(k) > ${REAL_NODE.token} ` +
      `AND token(k) <= 9010454139840013625 ALLOW FILTERING (see tombstone_failure_threshold); host ${REAL_NODE.hostId} at ${REAL_NODE.address}`;
    const abort = encodeError({
      code: ErrorCode.READ_FAILURE,
      message,
      trailer: new Writer().writeShort(Consistency.ONE).writeInt(0).writeInt(1).writeInt(1).writeByte(0).finish(),
    });
    const error = decodeError((await queryAnswered({ opcode: Opcode.ERROR, body: abort }))!.body);
    expect(error.code).toBe(ErrorCode.READ_FAILURE);
    expect(error.message).toBe(
      '2 nodes scanned over 100001 tombstones and aborted the query SELECT * FROM ks.t WHERE token(k) > <backend token> ' +
        'AND token(k) <= 9010454139840013625 ALLOW FILTERING (see tombstone_failure_threshold); host <backend host id> at 127.0.0.1',
    );
    expect(error.trailer).toEqual(new Writer().writeShort(Consistency.ONE).writeInt(0).writeInt(1).writeInt(1).writeByte(0).finish());
  });

  it('a failed backend connection (a TLS altname mismatch) is answered OVERLOADED naming no node address', async () => {
    // Node.js's wording for a node whose certificate does not carry its address.
    const tls = new BackendConnectionError(
      `no backend node accepted a connection: cannot connect to Cassandra at ${REAL_NODE.address}:9042: Hostname/IP does not match ` +
        `certificate's altnames: IP: ${REAL_NODE.address} is not in the cert's list: 10.9.8.6, fe80::7`,
    );
    const error = decodeError((await queryAnswered(tls))!.body);
    expect(error.code).toBe(ErrorCode.OVERLOADED);
    expect(error.message).toBe(
      'proxy: no backend node accepted a connection: cannot connect to Cassandra at a backend node: Hostname/IP does not match ' +
        "certificate's altnames: IP: a backend node is not in the cert's list: a backend node, a backend node",
    );
  });
});
