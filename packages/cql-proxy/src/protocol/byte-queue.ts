/** A chunk shorter than this that follows another is copied into a tail buffer instead of being held as a view. */
const SMALL_CHUNK = 1024;
const TAIL_BYTES = 4096;

/**
 * Received bytes not consumed yet, kept as the chunks they arrived in. Reads that fall inside one
 * chunk return views; only a read spanning chunks copies, and only the bytes it returns. This is
 * what lets the frame and segment decoders take arbitrary TCP chunks without re-buffering.
 *
 * Small chunks queued one behind another are the exception: they are copied into a tail buffer,
 * held as one chunk. A view costs about a hundred bytes of heap whatever its length, so a peer
 * that sent a large frame a byte per read, or a v5 envelope in segments of one byte (eleven bytes
 * on the wire per byte of payload, at full speed), had the queue hold a view per byte: a hundred
 * times what `connections.maxBufferedBytes` counts, enough to exhaust the heap. A whole frame in
 * one read (the usual case) never starts a tail, and an emptied queue lets its tail go.
 */
export class ByteQueue {
  private chunks: Buffer[] = [];
  private first = 0;
  private offset = 0;
  private size = 0;
  /** Where small chunks are joined; its bytes up to tailEnd are written once and never change. */
  private tail: Buffer | undefined;
  private tailEnd = 0;
  /** Where the last chunk, a view of the tail, starts in it; -1 when the last chunk is not the tail's. */
  private tailStart = -1;

  get length(): number {
    return this.size;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.size += chunk.length;
    const lastIndex = this.chunks.length - 1;
    const last = lastIndex >= this.first ? (this.chunks[lastIndex] as Buffer) : undefined;
    const joinable = this.tailStart >= 0 || (last !== undefined && last.length < SMALL_CHUNK);
    if (chunk.length >= SMALL_CHUNK || last === undefined || !joinable) {
      this.chunks.push(chunk);
      this.tailStart = -1;
      return;
    }
    if (this.tailStart < 0) {
      // The last chunk (small) starts a tail; a partly read head keeps its offset, as the copy is the same bytes.
      if (this.tail === undefined || this.tailEnd + last.length + chunk.length > this.tail.length) {
        this.tail = Buffer.allocUnsafeSlow(TAIL_BYTES);
        this.tailEnd = 0;
      }
      this.tailStart = this.tailEnd;
      this.tailEnd += last.copy(this.tail, this.tailEnd);
    } else if (this.tailEnd + chunk.length > (this.tail as Buffer).length) {
      // The tail is full: this chunk is held as it is, and the next small one starts a new tail with it.
      this.chunks.push(chunk);
      this.tailStart = -1;
      return;
    }
    const tail = this.tail as Buffer;
    this.tailEnd += chunk.copy(tail, this.tailEnd);
    this.chunks[lastIndex] = tail.subarray(this.tailStart, this.tailEnd);
  }

  /** The byte at `index` (`index < length`), without consuming anything or allocating. */
  byteAt(index: number): number {
    let i = this.first;
    let at = this.offset + index;
    for (;;) {
      const chunk = this.chunks[i++] as Buffer;
      if (at < chunk.length) return chunk[at] as number;
      at -= chunk.length;
    }
  }

  /** The first `n` bytes (`n <= length`) without consuming them. */
  peek(n: number): Buffer {
    return this.read(n, false);
  }

  /** Removes and returns the first `n` bytes (`n <= length`). */
  take(n: number): Buffer {
    return this.read(n, true);
  }

  /** Drops the first `n` bytes (`n <= length`). */
  skip(n: number): void {
    if (n > this.size) throw new RangeError(`ByteQueue holds ${this.size} bytes, ${n} requested`);
    this.advance(n);
  }

  private read(n: number, consume: boolean): Buffer {
    if (n > this.size) throw new RangeError(`ByteQueue holds ${this.size} bytes, ${n} requested`);
    const head = this.chunks[this.first];
    if (head !== undefined && head.length - this.offset >= n) {
      const view = head.subarray(this.offset, this.offset + n);
      if (consume) this.advance(n);
      return view;
    }
    const out = Buffer.allocUnsafe(n);
    let written = 0;
    let index = this.first;
    let offset = this.offset;
    while (written < n) {
      const chunk = this.chunks[index] as Buffer;
      const count = Math.min(chunk.length - offset, n - written);
      chunk.copy(out, written, offset, offset + count);
      written += count;
      offset += count;
      if (offset === chunk.length) {
        index++;
        offset = 0;
      }
    }
    if (consume) this.advance(n);
    return out;
  }

  private advance(n: number): void {
    this.size -= n;
    while (n > 0) {
      const chunk = this.chunks[this.first] as Buffer;
      const count = Math.min(chunk.length - this.offset, n);
      this.offset += count;
      n -= count;
      if (this.offset === chunk.length) {
        this.first++;
        this.offset = 0;
      }
    }
    if (this.first === this.chunks.length) {
      this.chunks.length = 0;
      this.first = 0;
      this.tail = undefined;
      this.tailStart = -1;
    } else if (this.first > 64) {
      this.chunks = this.chunks.slice(this.first);
      this.first = 0;
    }
  }
}
