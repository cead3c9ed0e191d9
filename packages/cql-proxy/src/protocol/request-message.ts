import type { FrameCompression } from './compression.js';
import { ProtocolError } from './errors.js';
import { FrameFlag, type Frame } from './frame.js';
import { QueryFlag } from './query-parameters.js';
import { Reader } from './reader.js';

/**
 * The message of a request frame, as the proxy must read it to decide anything about it:
 * decompressed (v3/v4 only: v5 ignores the frame flag, its segments are compressed instead), then
 * past the custom payload that the 0x04 flag puts in front of the message of any request (spec v4
 * §2.2). Reading the statement from the start of the body instead would take the payload map for
 * the query text, and a statement a client wraps in a payload would slip past the system-table
 * interception. A flag without a well-formed map, or a payload in v3 (which has none), is a
 * ProtocolError: the request is refused, never answered or forwarded as if the flag were not there.
 */
export function requestMessage(frame: Frame, compression: FrameCompression | undefined, maxBodyLength: number): Buffer {
  let body = frame.body;
  if (frame.version < 5 && frame.flags & FrameFlag.COMPRESSION) {
    if (!compression) throw new ProtocolError('A compressed frame arrived, but no compression was negotiated in STARTUP');
    body = compression.decompress(body, maxBodyLength);
  }
  if ((frame.flags & FrameFlag.CUSTOM_PAYLOAD) === 0) return body;
  if (frame.version < 4) {
    throw new ProtocolError(`A custom payload (frame flag 0x04) needs protocol v4 or later; this frame is v${frame.version}`);
  }
  const reader = new Reader(body);
  try {
    reader.readBytesMap();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ProtocolError(`The frame flag 0x04 announces a custom payload, but the body does not start with a [bytes map]: ${why}`, {
      cause: error,
    });
  }
  return body.subarray(reader.position);
}

/**
 * Whether a v5 QUERY names its own keyspace, read from the [short] consistency and [int] flags
 * that follow the statement (`reader` is just past it; it is read on). Cheap: nothing else is decoded.
 */
export function namesKeyspace(reader: Reader, version: number): boolean {
  if (version < 5 || reader.remaining < 6) return false;
  reader.readShort();
  return (reader.readInt() & QueryFlag.WITH_KEYSPACE) !== 0;
}
