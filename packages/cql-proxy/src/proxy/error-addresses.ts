import { decodeError, encodeError } from '../protocol/error-message.js';
import { ErrorCode } from '../protocol/errors.js';
import { Reader } from '../protocol/reader.js';
import { Writer } from '../protocol/writer.js';

/**
 * A backend's ERROR can name its nodes: v5 READ_FAILURE and WRITE_FAILURE carry a map of the
 * replicas that failed (spec v5 §8, `<reasonmap>`), and their messages, like some others, say
 * "... from /10.0.0.2:7000". A client of the proxy must not learn those addresses: each one is
 * replaced by `shown`, the address this client reached the proxy on (it coordinated the request,
 * as far as the client can tell). Failure counts and reasons are kept.
 */

/** `/address[:port]` as Cassandra writes an endpoint in a message (InetAddressAndPort). */
const ENDPOINT = /\/(?:\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9a-fA-F]*:[0-9a-fA-F:]*:[0-9a-fA-F.:]*\]?)(?::\d{1,5})?/g;

const WITH_REASON_MAP = new Set<number>([ErrorCode.READ_FAILURE, ErrorCode.WRITE_FAILURE]);

/**
 * The ERROR body with every node address replaced by `shown`; the same Buffer when there was none.
 * `rewrite` also hides what else of the backend the message may name (its ring tokens, host ids).
 */
export function hideNodeAddresses(body: Buffer, version: number, shown: string, rewrite?: (message: string) => string): Buffer {
  const error = decodeError(body);
  const message = rewrite ? rewrite(error.message) : withShownEndpoints(error.message, shown);
  let trailer = error.trailer;
  if (version >= 5 && WITH_REASON_MAP.has(error.code) && trailer) {
    // <consistency><received><blockfor><reasonmap>, then a byte (read) or a string (write) kept as is.
    const r = new Reader(trailer);
    const w = new Writer(trailer.length + 16).writeRaw(r.readRaw(10, 'consistency, received and blockfor'));
    const n = r.readInt();
    w.writeInt(n);
    for (let i = 0; i < n; i++) {
      r.readInetAddr();
      w.writeInetAddr(shown).writeShort(r.readShort());
    }
    trailer = w.writeRaw(r.readRest()).finish();
  }
  if (message === error.message && trailer === error.trailer) return body;
  return encodeError({ ...error, message, ...(trailer ? { trailer } : {}) });
}

/** `text` with every `/address[:port]` replaced by `/shown`. */
export function withShownEndpoints(text: string, shown: string): string {
  return text.replace(ENDPOINT, `/${shown}`);
}

/** `host:port` as the proxy's own messages write a backend node (an IP, a bracketed IPv6 or a name). */
const HOST_PORT = /(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*):\d{1,5}\b/g;

/**
 * An address without a port, as Node.js's own errors write one: "IP: 10.0.0.2 is not in the cert's
 * list: 10.0.0.1" (a TLS altname mismatch), "EHOSTUNREACH 10.0.0.2".
 */
const BARE_ADDRESS = /(?<![\w.:])(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]*:[0-9a-fA-F]*:[0-9a-fA-F.:]*)(?![\w.:])/g;

/** A message about a backend failure with each `host:port`, and each bare address, it names replaced by "a backend node". */
export function withoutNodeAddresses(message: string): string {
  return message.replace(HOST_PORT, 'a backend node').replace(BARE_ADDRESS, 'a backend node');
}
