/**
 * Buffers for the hub's bodies, reused from one answer to the next. A body
 * whose length the hub declares (`content-length`) is read straight into one
 * buffer of that size from here, and the buffer comes back once the answer
 * is decoded (the decoder copies what it keeps): no list of chunks held
 * until the end, no join into another buffer, and no fresh allocation
 * (a large one costs its page faults every time, about 0.3 ms per MB here).
 *
 * Sizes are rounded up to a power of two from 64 KiB; the spare buffers
 * held together stay within `maxBytes` (the body budget), and a buffer given
 * back past that is left to the collector.
 *
 * Written here: buffer-pool libraries on npm pool fixed-size slabs for
 * sockets, not buffers of a body's size with a byte bound.
 */
export interface BodyPool {
  /** A buffer of at least `size` bytes, its contents undefined. */
  take (size: number): Buffer
  /** Gives back a buffer from take (at most once); the caller keeps no view of it. */
  give (buffer: Buffer): void
  /** Bytes of the spare buffers held now. */
  readonly spare: number
}

const SMALLEST = 64 * 1024

export function sizeClassOf (size: number): number {
  return size <= SMALLEST ? SMALLEST : 2 ** Math.ceil(Math.log2(size))
}

export function bodyPool (maxBytes: number): BodyPool {
  const free = new Map<number, Buffer[]>()
  let spare = 0
  return {
    get spare () { return spare },
    take (size) {
      const bytes = sizeClassOf(size)
      const buffer = free.get(bytes)?.pop()
      if (buffer === undefined) return Buffer.allocUnsafeSlow(bytes)
      spare -= bytes
      return buffer
    },
    give (buffer) {
      const bytes = buffer.length
      if (bytes !== sizeClassOf(bytes) || spare + bytes > maxBytes) return
      let list = free.get(bytes)
      if (list === undefined) free.set(bytes, list = [])
      list.push(buffer)
      spare += bytes
    }
  }
}
