/**
 * Received bytes not consumed yet, kept as the chunks they arrived in. Reads that fall inside one
 * chunk return views; only a read spanning chunks copies, and only the bytes it returns. This is
 * what lets the frame and segment decoders take arbitrary TCP chunks without re-buffering.
 */
export class ByteQueue {
  private chunks: Buffer[] = [];
  private first = 0;
  private offset = 0;
  private size = 0;

  get length(): number {
    return this.size;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
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
    } else if (this.first > 64) {
      this.chunks = this.chunks.slice(this.first);
      this.first = 0;
    }
  }
}
