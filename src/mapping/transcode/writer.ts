/**
 * The output side of a transcoding run: our JSON, written into one buffer
 * that grows when it must, four bytes at a time where it can (a DataView
 * over the buffer).
 */
export class Writer {
  out: Buffer = EMPTY
  ov: DataView = view(EMPTY)
  o = 0

  /** Starts writing at the start of `out`. */
  into (out: Buffer): void {
    if (out !== this.out) {
      this.out = out
      this.ov = view(out)
    }
    this.o = 0
  }

  grow (need: number): void {
    const next = Buffer.allocUnsafeSlow(Math.max(this.out.length * 2, this.o + need))
    this.out.copy(next, 0, 0, this.o)
    this.out = next
    this.ov = view(next)
  }

  byte (c: number): void {
    if (this.o >= this.out.length) this.grow(1)
    this.out[this.o++] = c
  }

  bytes (b: Buffer): void {
    const n = b.length
    if (this.o + n > this.out.length) this.grow(n)
    const out = this.out
    let o = this.o
    for (let i = 0; i < n; i++) out[o++] = b[i]!
    this.o = o
  }

  text (s: string): void {
    const max = s.length * 3
    if (this.o + max > this.out.length) this.grow(max)
    this.o += this.out.write(s, this.o, 'utf8')
  }
}

const EMPTY = Buffer.alloc(0)

export function view (b: Buffer): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength)
}

/** Little-endian words of `bytes`, zero-padded to a multiple of 4. */
export function wordsOf (bytes: Buffer): Int32Array {
  const padded = Buffer.alloc(Math.ceil(bytes.length / 4) * 4)
  bytes.copy(padded)
  return Int32Array.from({ length: padded.length / 4 }, (_, k) => padded.readInt32LE(k * 4))
}
