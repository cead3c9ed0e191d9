import type { Socket } from 'node:net';
import { encodeSegments } from '../protocol/segment.js';

/**
 * Writes one encoded frame (header and body) to a socket in a single corked burst: as is, or,
 * after a v5 STARTUP exchange, wrapped in segments (`segments` set, lz4 when negotiated).
 */
export function writeFrame(socket: Socket, header: Buffer, body: Buffer, segments: { lz4: boolean } | undefined): void {
  socket.cork();
  if (segments) {
    for (const piece of encodeSegments([Buffer.concat([header, body])], segments)) socket.write(piece);
  } else {
    socket.write(header);
    if (body.length > 0) socket.write(body);
  }
  socket.uncork();
}
