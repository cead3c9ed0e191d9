import { Socket } from 'node:net';

/** What each slab holds. */
const SLAB_BYTES = 64 * 1024;
/** With less than this left in a slab, the next read gets a new one (a short buffer splits a frame over more reads). */
const MIN_READ_BYTES = 16 * 1024;

/**
 * Read buffers for a socket's `onread` option. Node's default reads allocate 64 KiB per read, shrink
 * it to what was read and push the chunk through the readable stream to a 'data' listener; here
 * successive reads fill successive parts of a slab and the chunk goes straight to {@link receive}.
 * No part of a slab is read into twice, so a chunk stays valid as long as anything holds a view of
 * it (a frame body waiting in the decoder, a write queue or a retry), as with the default reads.
 * `socket.pause()` and `resume()` work as usual.
 */
export class SlabReads {
  #slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
  #at = 0;
  /** Where the received chunks go; set once the owner exists (nothing arrives before it sends). */
  receive: (chunk: Buffer) => void = () => undefined;

  /** The `onread` option of `net.connect`. */
  readonly options = {
    buffer: (): Buffer => {
      if (SLAB_BYTES - this.#at < MIN_READ_BYTES) {
        this.#slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
        this.#at = 0;
      }
      return this.#slab.subarray(this.#at);
    },
    callback: (bytes: number, buffer: Uint8Array): boolean => {
      const chunk = (buffer as Buffer).subarray(0, bytes);
      this.#at += bytes;
      this.receive(chunk);
      return true; // false would pause the socket; pausing is the owner's, through socket.pause()
    },
  };
}

/** The parts of Node's socket this relies on that its types do not show. */
interface HandleOwner {
  _handle: { useUserBuffer?: unknown } | null;
}

/**
 * An accepted socket, re-wrapped so that it reads into slabs like a connected one. `net.Server` has
 * no `onread` option (only `net.connect` has), so the new Socket takes over the accepted one's
 * handle: the constructor points the handle's reads at itself and at the slab (`useUserBuffer`).
 * Call it in the server's connection callback, before anything listens on `accepted`: the handle is
 * already reading, but nothing can have been read before the callback returns. The accepted Socket
 * lets go of the handle and is destroyed (which closes nothing, and lowers the server's connection
 * count: the proxy counts its clients itself). Undefined, with `accepted` untouched, where the
 * handle is not the kind this expects (another Node, a socket already in use).
 */
export function adoptIntoSlabs(accepted: Socket): { socket: Socket; reads: SlabReads } | undefined {
  const owner = accepted as unknown as HandleOwner;
  const handle = owner._handle;
  if (!handle || typeof handle.useUserBuffer !== 'function' || accepted.listenerCount('data') > 0 || accepted.bytesRead > 0)
    return undefined;
  const reads = new SlabReads();
  const socket = new Socket({ handle, onread: reads.options, readable: true, writable: true } as ConstructorParameters<typeof Socket>[0]);
  owner._handle = null;
  accepted.destroy();
  return { socket, reads };
}
