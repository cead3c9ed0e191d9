import type { FrameCompression } from './compression.js';
import { ProtocolError } from './errors.js';
import { FrameFlag, MAX_BODY_LENGTH, type Frame, type FrameHeader } from './frame.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';

/**
 * What may precede the message in a frame body (spec §4, v4+): a tracing id (responses with the
 * tracing flag), warnings (responses with the warning flag), a custom payload (custom-payload flag),
 * in that order. A request's tracing flag asks for tracing and adds nothing to its body.
 */
export interface BodyExtras {
  readonly tracingId?: string;
  readonly warnings?: readonly string[];
  readonly customPayload?: ReadonlyMap<string, Buffer | null>;
}

/** Splits an (uncompressed) frame body into its extras and the message proper, a view. */
export function splitBody(frame: Frame): { readonly extras: BodyExtras; readonly message: Buffer } {
  const mask = FrameFlag.TRACING | FrameFlag.WARNING | FrameFlag.CUSTOM_PAYLOAD;
  if ((frame.flags & mask) === 0 || (!frame.response && (frame.flags & FrameFlag.CUSTOM_PAYLOAD) === 0)) {
    return { extras: {}, message: frame.body };
  }
  const r = new Reader(frame.body);
  const extras: { -readonly [K in keyof BodyExtras]: BodyExtras[K] } = {};
  if (frame.response && frame.flags & FrameFlag.TRACING) extras.tracingId = r.readUuid();
  if (frame.response && frame.flags & FrameFlag.WARNING) extras.warnings = r.readStringList();
  if (frame.flags & FrameFlag.CUSTOM_PAYLOAD) extras.customPayload = r.readBytesMap();
  return { extras, message: r.readRest() };
}

/** The body and the flags announcing its extras (merged into `flags`). */
export function joinBody(
  extras: BodyExtras,
  message: Buffer,
  response: boolean,
  flags = 0,
): { readonly flags: number; readonly body: Buffer } {
  const { tracingId, warnings, customPayload } = extras;
  if (tracingId === undefined && warnings === undefined && customPayload === undefined) return { flags, body: message };
  const w = new Writer(64 + message.length);
  if (response && tracingId !== undefined) {
    w.writeUuid(tracingId);
    flags |= FrameFlag.TRACING;
  }
  if (response && warnings !== undefined) {
    w.writeStringList(warnings);
    flags |= FrameFlag.WARNING;
  }
  if (customPayload !== undefined) {
    w.writeBytesMap(customPayload);
    flags |= FrameFlag.CUSTOM_PAYLOAD;
  }
  return { flags, body: w.writeRaw(message).finish() };
}

/**
 * A received frame's message and extras: decompressed first when the v3/v4 COMPRESSION flag is set
 * (v5 ignores the flag; its segments were already decompressed).
 */
export function openFrame(
  frame: Frame,
  compression?: FrameCompression,
  maxBodyLength = MAX_BODY_LENGTH,
): { readonly extras: BodyExtras; readonly message: Buffer } {
  if (frame.version >= 5 || (frame.flags & FrameFlag.COMPRESSION) === 0) return splitBody(frame);
  if (!compression) throw new ProtocolError('A compressed frame arrived but no compression was negotiated in STARTUP');
  const body = compression.decompress(frame.body, maxBodyLength);
  return splitBody({ ...frame, flags: frame.flags & ~FrameFlag.COMPRESSION, body });
}

/**
 * A frame to send: extras joined, then compressed for v3/v4 when a compression was negotiated and
 * the body is at least `compressMinLength` bytes (tiny bodies do not shrink).
 */
export function sealFrame(
  header: Omit<FrameHeader, 'flags'> & { readonly flags?: number },
  extras: BodyExtras,
  message: Buffer,
  compression?: FrameCompression,
  compressMinLength = 64,
): Frame {
  const joined = joinBody(extras, message, header.response, (header.flags ?? 0) & ~FrameFlag.COMPRESSION);
  if (!compression || header.version >= 5 || joined.body.length < compressMinLength) return { ...header, ...joined };
  return { ...header, flags: joined.flags | FrameFlag.COMPRESSION, body: compression.compress(joined.body) };
}
