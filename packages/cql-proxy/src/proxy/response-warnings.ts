import type { FrameCompression } from '../protocol/compression.js';
import { joinBody, openFrame } from '../protocol/envelope.js';
import { FrameFlag, type Frame } from '../protocol/frame.js';
import type { BackendFootprint } from './backend-footprint.js';
import { withShownEndpoints } from './error-addresses.js';

/**
 * A backend answer may carry warnings (frame flag 0x08, a [string list] before the message) written
 * for a client of that node: "... higher than the number of nodes 3", a tombstone warning whose
 * query is the node's sub-range `WHERE token(k) > 3074457345618258602` (a ring token), messages
 * naming `/10.0.0.2:7000`. Each is passed on as the virtual cluster's client may read it:
 *
 * - a node endpoint (`/address:port`, or a bare backend address) becomes the address the client
 *   dialled, as in errors (error-addresses.ts): as far as the client can tell, this proxy answered;
 * - a backend ring token or host id becomes `<backend token>` / `<backend host id>`: there is no
 *   virtual counterpart (a sub-range bound of the real ring means nothing on the virtual one);
 * - a warning stating how many nodes the backend has is dropped. Rewriting its count would still
 *   say whether the replication factor exceeds the real node count, and a client could find the count
 *   by trying factors; the backend logs the same warning for its operator.
 *
 * Only frames with the flag pay anything: the others are forwarded as they came.
 */

/** Cassandra's "replication factor N ... is higher than the number of nodes M [for datacenter D]". */
const NODE_COUNT = /\bnumber of nodes \d+/i;
const BARE_IPV4 = /(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.])/g;
/**
 * Ring tokens worth hiding: six digits or more. A ring can hold a small token (the two-node
 * calculator's 0), and the same number is then a row count in "Read 0 live rows": a small token
 * says nothing of the ring, and rewriting counts would corrupt what the client reads.
 */
const INTEGER = /(?<![\w.])-?\d{6,20}(?![\w.])/g;
/** A bare IPv6 address (loosely: rewritten only when it is a backend node's). */
const BARE_IPV6 = /(?<![\w:.])[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}(?![\w:])/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

export const HIDDEN_TOKEN = '<backend token>';
export const HIDDEN_HOST_ID = '<backend host id>';

/** One warning as a client of the proxy may read it; undefined when it is not passed on at all. */
export function clientWarning(warning: string, shown: string, footprint: BackendFootprint): string | undefined {
  if (NODE_COUNT.test(warning)) return undefined;
  return withoutFootprint(warning, shown, footprint);
}

/**
 * `text` (a warning, an error message) with the backend's node endpoints shown as `shown` and its
 * ring tokens and host ids hidden; the same string when it names none of them.
 */
export function withoutFootprint(text: string, shown: string, footprint: BackendFootprint): string {
  return withShownEndpoints(text, shown)
    .replace(BARE_IPV4, (address) => (footprint.addresses.has(address) ? shown : address))
    .replace(BARE_IPV6, (address) => (footprint.addresses.has(address.toLowerCase()) ? shown : address))
    .replace(INTEGER, (n) => (footprint.tokens.has(n) ? HIDDEN_TOKEN : n))
    .replace(UUID, (id) => (footprint.hostIds.has(id.toLowerCase()) ? HIDDEN_HOST_ID : id));
}

const EXTRAS = FrameFlag.TRACING | FrameFlag.WARNING | FrameFlag.CUSTOM_PAYLOAD | FrameFlag.COMPRESSION;

/**
 * The flags and body of a backend answer with its warnings as a client may read them (see above),
 * compressed again when it came compressed; undefined when no warning needed a change (send the
 * frame as it is). Throws when the frame cannot be read.
 */
export function withClientWarnings(
  frame: Frame,
  compression: FrameCompression | undefined,
  maxBodyLength: number,
  shown: string,
  footprint: BackendFootprint,
): { readonly flags: number; readonly body: Buffer } | undefined {
  const { extras, message } = openFrame(frame, compression, maxBodyLength);
  const kept: string[] = [];
  let changed = false;
  for (const warning of extras.warnings ?? []) {
    const seen = clientWarning(warning, shown, footprint);
    if (seen !== warning) changed = true;
    if (seen !== undefined) kept.push(seen);
  }
  if (!changed) return undefined;
  const { warnings: _dropped, ...others } = extras;
  const joined = joinBody(kept.length > 0 ? { ...others, warnings: kept } : others, message, true, frame.flags & ~EXTRAS);
  // v5 compresses segments, not frames: only a v3/v4 answer that came compressed is compressed again.
  if (frame.version < 5 && frame.flags & FrameFlag.COMPRESSION && compression) {
    return { flags: joined.flags | FrameFlag.COMPRESSION, body: compression.compress(joined.body) };
  }
  return joined;
}
