import { view, Writer } from './writer.ts'

// Bytes of JSON the reader looks for.
export const QUOTE = 0x22
export const BACKSLASH = 0x5c
export const COMMA = 0x2c
export const COLON = 0x3a
export const OPEN_BRACE = 0x7b
export const CLOSE_BRACE = 0x7d
export const OPEN_BRACKET = 0x5b
export const CLOSE_BRACKET = 0x5d
export const MINUS = 0x2d
export const ZERO = 0x30
export const NINE = 0x39

// What scanNumber found.
export const NOT_PLAIN = 0
export const PLAIN_INTEGER = 1
export const PLAIN_DECIMAL = 2

export const NULL = Buffer.from('null')
export const TRUE = Buffer.from('true')
export const FALSE = Buffer.from('false')

/** Thrown (without a stack) to give up; never escapes a Transcoder (index.ts). */
export const GIVE_UP = { giveUp: true }

/** The hash of a key's bytes; scanKey computes the same while it scans one. */
export function hashOf (bytes: Uint8Array, start: number, end: number): number {
  let h = 0
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + bytes[i]!) | 0
  return h
}

/**
 * The input side of a transcoding run: the hub's JSON bytes and the position
 * in them. It validates what it moves past (JSON's grammar) and gives up
 * (throws GIVE_UP) on anything else; what passes through unchanged it copies
 * to the output itself. A Reader is a Writer with the input beside it, so
 * that a run is one object and the hot loops reach input and output through
 * one `this`.
 */
export class Reader extends Writer {
  src: Buffer = this.out
  /** `src` as a DataView: the hot loops read four bytes at a time. */
  sv: DataView = this.ov
  end = 0
  p = 0
  /** Set by scanString: the string held an escape sequence. */
  escaped = false
  /**
   * Reading a member that is not part of the answer (keyed lists, values left to the rules):
   * validate, keep no names.
   */
  skipping = false
  /** What this answer needed tolerated (DRIFT bits, mapping/drift.ts), set where it is met. */
  drift = 0

  /** Starts reading `src` from its start, writing into `out` from its start. */
  begin (src: Buffer, out: Buffer): void {
    this.into(out)
    this.src = src
    this.sv = view(src)
    this.end = src.length
    this.p = 0
    this.escaped = false
    this.skipping = false
    this.drift = 0
  }

  /** Input bytes [start, end) to the output, unchanged. */
  copy (start: number, end: number): void {
    const n = end - start
    if (this.o + n > this.out.length) this.grow(n)
    if (n > 64) {
      this.src.copy(this.out, this.o, start, end)
      this.o += n
      return
    }
    const src = this.src
    const out = this.out
    let o = this.o
    for (let i = start; i < end; i++) out[o++] = src[i]!
    this.o = o
  }

  ws (): void {
    const src = this.src
    let p = this.p
    while (p < this.end) {
      const c = src[p]!
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break
      p++
    }
    this.p = p
  }

  /** The next byte after whitespace, or -1 at the end. */
  peek (): number {
    this.ws()
    return this.p < this.end ? this.src[this.p]! : -1
  }

  expect (c: number): void {
    if (this.peek() !== c) throw GIVE_UP
    this.p++
  }

  /**
   * At an opening quote: validates the string and moves past it. Returns the
   * index of the closing quote; `escaped` tells whether it held escapes.
   */
  scanString (): number {
    const src = this.src
    const end = this.end
    let i = this.p + 1
    let escaped = false
    for (;;) {
      if (i >= end) throw GIVE_UP
      const c = src[i]!
      if (c === QUOTE) break
      if (c === BACKSLASH) {
        escaped = true
        i = this.escapeEnd(i)
        continue
      }
      if (c < 0x20) throw GIVE_UP
      i++
    }
    this.escaped = escaped
    this.p = i + 1
    return i
  }

  /** At an opening quote: copies the string to the output as it validates it. */
  copyString (): void {
    const src = this.src
    const end = this.end
    const start = this.p
    let i = start + 1
    // Room for the whole rest of the input: no capacity check per byte.
    if (this.o + (end - start) > this.out.length) this.grow(end - start)
    const out = this.out
    const sv = this.sv
    const ov = this.ov
    let o = this.o
    out[o++] = QUOTE
    for (;;) {
      // Four bytes at a time while none is a quote, a backslash or a control character.
      for (let last = end - 4; i <= last; i += 4, o += 4) {
        const w = sv.getInt32(i, true)
        const q = w ^ 0x22222222
        const b = w ^ 0x5c5c5c5c
        if (
          (((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b) | ((w - 0x20202020) & ~w)) &
          0x80808080
        ) { break }
        ov.setInt32(o, w, true)
      }
      if (i >= end) throw GIVE_UP
      const c = src[i]!
      out[o++] = c
      if (c > BACKSLASH) {
        i++
        continue
      }
      if (c === QUOTE) break
      if (c === BACKSLASH) {
        this.p = i
        const next = this.escapeEnd(i)
        for (let k = i + 1; k < next; k++) out[o++] = src[k]!
        i = next
        continue
      }
      if (c < 0x20) throw GIVE_UP
      i++
    }
    this.o = o
    this.p = i + 1
  }

  /** At a backslash: validates the escape, returns the index after it. */
  escapeEnd (i: number): number {
    const src = this.src
    const end = this.end
    const e = i + 1 < end ? src[i + 1]! : 0
    if (e === 0x75) { // \uXXXX
      if (i + 5 >= end) throw GIVE_UP
      for (let k = i + 2; k < i + 6; k++) if (!isHex(src[k]!)) throw GIVE_UP
      return i + 6
    }
    // " \ / b f n r t
    if (
      e !== QUOTE &&
      e !== BACKSLASH &&
      e !== 0x2f &&
      e !== 0x62 &&
      e !== 0x66 &&
      e !== 0x6e &&
      e !== 0x72 &&
      e !== 0x74
    ) { throw GIVE_UP }
    return i + 2
  }

  /**
   * At a key's opening quote: moves past it and returns its hash (hashOf),
   * or gives up on a key with escapes (rare; the reference path reads it).
   */
  scanKey (): number {
    const src = this.src
    const end = this.end
    let i = this.p + 1
    let h = 0
    for (;;) {
      if (i >= end) throw GIVE_UP
      const c = src[i]!
      if (c === QUOTE) break
      if (c === BACKSLASH || c < 0x20) throw GIVE_UP
      h = (Math.imul(h, 31) + c) | 0
      i++
    }
    this.p = i + 1
    return h
  }

  /** The decoded value of the string whose quotes are at start and end. */
  stringValue (start: number, end: number): string {
    if (this.escaped) return JSON.parse(this.src.toString('utf8', start, end + 1)) as string
    return this.src.toString('utf8', start + 1, end)
  }

  /**
   * At a number: validates it (JSON's grammar) and moves past it. Returns
   * PLAIN_INTEGER or PLAIN_DECIMAL when the number is its own shortest form,
   * what String(Number(text)) gives back, so that it can pass through
   * unchanged: an integer of at most 15 digits other than -0, or a decimal
   * of at most 15 significant digits without an exponent or a trailing zero
   * and not below 0.1 in magnitude (fixed notation; at most 15 digits are
   * exact in a double, so no shorter form reads back the same). Otherwise
   * NOT_PLAIN.
   */
  scanNumber (): number {
    const src = this.src
    const end = this.end
    let i = this.p
    let plain = PLAIN_INTEGER
    const negative = src[i] === MINUS
    if (negative) i++
    const digits = i
    if (i >= end) throw GIVE_UP
    const zero = src[i] === ZERO
    if (zero) {
      i++
    } else if (src[i]! > ZERO && src[i]! <= NINE) {
      while (i < end && src[i]! >= ZERO && src[i]! <= NINE) i++
    } else {
      throw GIVE_UP
    }
    let significant = zero ? 0 : i - digits
    if (i < end && src[i] === 0x2e) { // .
      i++
      const from = i
      while (i < end && src[i]! >= ZERO && src[i]! <= NINE) i++
      if (i === from) throw GIVE_UP
      significant += i - from
      plain = src[i - 1] === ZERO || (zero && src[from] === ZERO) ? NOT_PLAIN : PLAIN_DECIMAL
    } else if (zero) {
      significant = 1
      if (negative) plain = NOT_PLAIN
    }
    if (significant > 15) plain = NOT_PLAIN
    if (i < end && (src[i] === 0x65 || src[i] === 0x45)) { // e E
      plain = NOT_PLAIN
      i++
      if (i < end && (src[i] === 0x2b || src[i] === MINUS)) i++
      const from = i
      while (i < end && src[i]! >= ZERO && src[i]! <= NINE) i++
      if (i === from) throw GIVE_UP
    }
    this.p = i
    return plain
  }

  /** A number token as a JS number (it is not plain). */
  numberAt (start: number): number {
    return Number(this.src.toString('latin1', start, this.p))
  }

  /**
   * After an object member: past a comma (true, another member follows) or the closing brace
   * (false).
   */
  moreMembers (): boolean {
    if (this.src[this.p] === COMMA) {
      this.p++
      return true
    }
    const next = this.peek()
    this.p++
    if (next === COMMA) return true
    if (next === CLOSE_BRACE) return false
    throw GIVE_UP
  }

  /** At `t`, `f` or `n`: the literal, validated, moved past. */
  literal (): Buffer {
    const c = this.src[this.p]
    const word = c === 0x74 ? TRUE : c === 0x66 ? FALSE : c === 0x6e ? NULL : undefined
    if (word === undefined || this.p + word.length > this.end) throw GIVE_UP
    for (let k = 0; k < word.length; k++) if (this.src[this.p + k] !== word[k]) throw GIVE_UP
    this.p += word.length
    return word
  }

  /**
   * Whether the key starting at `start` is exactly these bytes (a spec name: no quote or escape in
   * it).
   */
  keyIs (key: Buffer, start: number): boolean {
    const n = key.length
    const src = this.src
    if (start + n >= this.end || src[start + n] !== QUOTE) return false
    return this.bytesAt(key, start)
  }

  /** Whether the input holds exactly these bytes at `start` (the caller knows they fit). */
  bytesAt (bytes: Buffer, start: number): boolean {
    const src = this.src
    for (let k = 0; k < bytes.length; k++) if (bytes[k] !== src[start + k]) return false
    return true
  }
}

function isHex (c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)
}
