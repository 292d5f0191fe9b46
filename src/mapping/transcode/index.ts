import { isUtf8 } from 'node:buffer'
import { toIsoDate, toIsoDateTime } from '../../domain/dates.ts'
import { cachedCamelCase } from '../fields.ts'
import { isArrayKind, isResource, namesOf, type FieldSpec, type ResourceSpec } from '../resource-spec.ts'

/**
 * The fast path from the hub's JSON bytes to ours, compiled once per
 * operation from the same resource specs as the normalizer (normalize.ts).
 *
 * It reads the hub's body as bytes and writes our JSON as bytes in one pass:
 * no parsed tree, no normalized tree, no JSON.stringify. Keys are recognised
 * by a hash computed while they are scanned and written as precomputed
 * `"camelName":` bytes; strings pass through as they are (still escaped);
 * only the values that change (dates, flags, numbers sent as strings) are
 * looked at. Measured on a 20-document SP2 list (54 KB): 0.47 ms for
 * JSON.parse + normalize + JSON.stringify, about 0.20 ms here.
 *
 * It handles the well-formed answer and nothing else: on anything unusual
 * (a value of the wrong type, a missing identity field, a duplicate key, an
 * escaped key, drift of the list key, invalid UTF-8, malformed JSON) it gives
 * up and returns undefined, and the caller takes the reference path (JSON.parse
 * and the compiled normalizer), which decides and reports exactly as before.
 * The two are held to the same answers by a differential test
 * (test/transcode.test.ts).
 *
 * Written here rather than taken from a library: a streaming JSON tokenizer
 * (stream-json, @streamparser/json) emits tokens as JS values, which costs
 * more than JSON.parse itself; what makes this fast is never decoding the
 * bytes that do not change.
 */
export interface Transcoded {
  /** Our JSON for the `data` member, UTF-8 (a view into `framed`). */
  json: Buffer
  /** `frame.head`, the JSON and `frame.tail(count)` in one buffer; the JSON alone without a frame. */
  framed: Buffer
  /** Items of a list answer; undefined for a record. */
  count: number | undefined
}

/**
 * Bytes the caller wants around the JSON (the response envelope), written
 * into the same buffer so that the answer is copied once.
 */
export interface Frame {
  head: Buffer
  tail: (count: number | undefined) => Buffer
}

export type Transcoder = (body: Buffer, frame?: Frame) => Transcoded | undefined

export type TranscodeShape =
  | { type: 'list' | 'records' | 'record', item: ResourceSpec }
  | { type: 'keyed-list', item: ResourceSpec, key: string }

interface Options {
  /** UTC offset of upstream local times, e.g. `+07:00`. */
  offset: string
}

// Field kinds, as small integers for the value switch.
const STRING = 0 // 'string' and 'text' convert alike: a string, or a number as a string
const INTEGER = 1
const NUMBER = 2
const FLAG = 3
const DATE = 4
const DATETIME = 5
const JSON_CONTENT = 6
const RECORD = 7
const RECORD_ARRAY = 8
const JSON_ARRAY = 9
const DATE_WITH_TIME = 10

interface Field {
  /** The upstream name, bytes. */
  key: Buffer
  hash: number
  /**
   * The key with its closing quote and a colon (`key":`, compact JSON) as
   * little-endian words at the offsets in `keyAt`, the last one overlapping:
   * the usual member is recognised in a few word comparisons. Empty for a
   * member shorter than a word.
   */
  keyAt: Int32Array
  keyWords: Int32Array
  /** `"ourName":` */
  out: Buffer
  /** `"ourName":` and `,"ourName":` as little-endian words, zero-padded to a multiple of 4 bytes. */
  outWords: Int32Array
  commaWords: Int32Array
  kind: number
  /** DATE_WITH_TIME: `,"ourDateTimeName":`, written between the date and the date-time. */
  second: Buffer | undefined
  nullable: boolean
  emptyAsNull: boolean
  record: Plan | undefined
  /** This field's bit in Plan.requiredMask, or 0. */
  requiredBit: number
  index: number
  /** The field that followed this one in the last object read (the prediction for the next key). */
  next: Field | undefined
}

interface Plan {
  fields: Field[]
  /** The first field of the last object read (the prediction for its first key). */
  first: Field | undefined
  byHash: Map<number, Field[]>
  requiredMask: number
  /** Our names of the spec's fields: an unknown key camelCased onto one of them is left to the reference path. */
  names: Set<string>
  /** Per field, the serial of the object it was last seen in (duplicate keys). */
  seen: Float64Array
}

/** Thrown (without a stack) to give up; never escapes a Transcoder. */
const GIVE_UP = { giveUp: true }

const MAX_DEPTH = 64
const KEY_CACHE_LIMIT = 10_000

/**
 * The output is written into one buffer reused by every run (runs are
 * synchronous), then copied once into a buffer of the exact size: a fresh
 * oversized buffer per answer made the garbage collector run for the memory
 * outside the heap (a Mark-Compact every ~200 ms at 400 answers of 54 KB per
 * second). A scratch grown past this size is not kept.
 */
const SCRATCH_KEEP_BYTES = 4 * 1024 * 1024
let scratch: Buffer = Buffer.allocUnsafeSlow(64 * 1024)

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39

// What scanNumber found.
const NOT_PLAIN = 0
const PLAIN_INTEGER = 1
const PLAIN_DECIMAL = 2

const NULL = Buffer.from('null')
const TRUE = Buffer.from('true')
const FALSE = Buffer.from('false')

function hashOf (bytes: Uint8Array, start: number, end: number): number {
  let h = 0
  for (let i = start; i < end; i++) h = (Math.imul(h, 31) + bytes[i]!) | 0
  return h
}

/** Little-endian words of `bytes`, zero-padded to a multiple of 4. */
function wordsOf (bytes: Buffer): Int32Array {
  const padded = Buffer.alloc(Math.ceil(bytes.length / 4) * 4)
  bytes.copy(padded)
  return Int32Array.from({ length: padded.length / 4 }, (_, k) => padded.readInt32LE(k * 4))
}

function kindOf (field: FieldSpec): number {
  const { kind } = field
  if (isResource(kind)) return RECORD
  if (isArrayKind(kind)) return kind.arrayOf === 'json' ? JSON_ARRAY : RECORD_ARRAY
  switch (kind) {
    case 'string':
    case 'text': return STRING
    case 'integer': return INTEGER
    case 'number': return NUMBER
    case 'flag': return FLAG
    case 'date': return DATE
    case 'datetime': return DATETIME
    case 'date-with-time': return DATE_WITH_TIME
    case 'json': return JSON_CONTENT
  }
}

function compilePlan (spec: ResourceSpec, compiling: Set<ResourceSpec>): Plan {
  // A spec inside itself would share one `seen` array between nested objects.
  if (compiling.has(spec)) throw new Error(`resource ${spec.id} contains itself`)
  compiling.add(spec)
  const required = spec.required ?? []
  if (required.length > 30) throw new Error(`resource ${spec.id}: more than 30 required fields`)
  const fields = spec.fields.map((f, index): Field => {
    const key = Buffer.from(f.upstream)
    const requiredAt = required.indexOf(f.upstream)
    const inner = isResource(f.kind) ? f.kind : isArrayKind(f.kind) && f.kind.arrayOf !== 'json' ? f.kind.arrayOf : undefined
    const out = Buffer.from(`${JSON.stringify(f.name)}:`)
    const member = Buffer.concat([key, Buffer.from('":')])
    // A member shorter than a word (a one-byte key) has no words: memberIs leaves it to keyIs.
    const keyAt = member.length < 4 ? [] : Array.from({ length: Math.ceil(member.length / 4) }, (_, k) => Math.min(k * 4, member.length - 4))
    return {
      key,
      keyAt: Int32Array.from(keyAt),
      keyWords: Int32Array.from(keyAt, at => member.readInt32LE(at)),
      hash: hashOf(key, 0, key.length),
      out,
      outWords: wordsOf(out),
      commaWords: wordsOf(Buffer.concat([Buffer.from(','), out])),
      kind: kindOf(f),
      second: namesOf(f).length === 2 ? Buffer.from(`,${JSON.stringify(namesOf(f)[1])}:`) : undefined,
      nullable: f.nullable === true,
      // As in normalize.ts: an empty string is null only on a nullable field.
      emptyAsNull: f.nullable === true && f.emptyAsNull === true,
      record: inner === undefined ? undefined : compilePlan(inner, compiling),
      requiredBit: requiredAt === -1 ? 0 : 1 << requiredAt,
      index,
      next: undefined
    }
  })
  // Predictions start in the spec's order and then follow the hub's.
  fields.forEach((field, i) => { field.next = fields[i + 1] })
  for (const name of required) {
    if (!spec.fields.some(f => f.upstream === name)) throw new Error(`resource ${spec.id}: required field ${name} is not one of its fields`)
  }
  const byHash = new Map<number, Field[]>()
  for (const field of fields) byHash.set(field.hash, [...(byHash.get(field.hash) ?? []), field])
  compiling.delete(spec)
  return {
    fields,
    first: fields[0],
    byHash,
    requiredMask: required.reduce((mask, _, i) => mask | (1 << i), 0),
    names: new Set(spec.fields.flatMap(namesOf)),
    seen: new Float64Array(fields.length).fill(-1)
  }
}

/** A key the specs do not name: its bytes, its camelCased name and that name's `"name":` bytes. */
interface OtherKey {
  raw: Buffer
  name: string
  out: Buffer
}

/** Unescaped keys the specs do not name, by the hash of their bytes: the same few recur. */
const otherKeys = new Map<number, OtherKey[]>()
let otherKeyCount = 0

/**
 * Numbers every object read, across runs (plans outlive a run), so that a
 * field stamped with the current serial in Plan.seen was seen in this object.
 * A double: 2^53 objects before it could repeat.
 */
let objectSerial = 0

/** One transcoding: the input, the position in it, the output being written. */
class Run {
  src: Buffer
  /** `src` and `out` as DataViews: the hot loops read and write four bytes at a time. */
  sv: DataView
  end: number
  p = 0
  out: Buffer
  ov: DataView
  o = 0
  /** Set by scanString: the string held an escape sequence / only ASCII. */
  escaped = false
  readonly offset: Buffer
  /** The offset and the closing quote, as little-endian words (dateFast). */
  readonly offsetWords: Int32Array
  readonly offsetText: string
  /** Reading a member that is not part of the answer (keyed lists): validate, keep no names. */
  skipping = false

  constructor (src: Buffer, out: Buffer, offset: Buffer, offsetWords: Int32Array, offsetText: string) {
    this.src = src
    this.sv = view(src)
    this.end = src.length
    this.out = out
    this.ov = view(out)
    this.offset = offset
    this.offsetWords = offsetWords
    this.offsetText = offsetText
  }

  // Output

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

  text (s: string): void {
    const max = s.length * 3
    if (this.o + max > this.out.length) this.grow(max)
    this.o += this.out.write(s, this.o, 'utf8')
  }

  // Input

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
        if ((((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b) | ((w - 0x20202020) & ~w)) & 0x80808080) break
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
    if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) throw GIVE_UP
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

  /**
   * At a date's opening quote: the usual compact shapes (`YYYY-MM-DD` for a
   * date, `YYYY-MM-DD HH:MM:SS` for a date-time) read and written in words,
   * byte for byte what toIsoDate / toIsoDateTime make of them. False,
   * moving nothing: take the general path.
   */
  dateFast (kind: number): boolean {
    const src = this.src
    const sv = this.sv
    const p = this.p
    const close = kind === DATE ? p + 11 : p + 20
    if (close >= this.end || src[close] !== QUOTE) return false
    // The characters between the quotes: printable ASCII, no quote or backslash.
    for (let i = p + 1, last = close - 4; ; i += 4) {
      if (i > last) i = last
      const w = sv.getInt32(i, true)
      const q = w ^ 0x22222222
      const b = w ^ 0x5c5c5c5c
      if ((((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b) | ((w - 0x20202020) & ~w) | w) & 0x80808080) return false
      if (i === last) break
    }
    // The separators toIsoDate / toIsoDateTime look at, and only those.
    if (kind === DATE) {
      if (src[p + 5] !== MINUS || src[p + 8] !== MINUS) return false
      if (this.o + 12 > this.out.length) this.grow(12)
      const ov = this.ov
      const o = this.o
      ov.setInt32(o, sv.getInt32(p, true), true)
      ov.setInt32(o + 4, sv.getInt32(p + 4, true), true)
      ov.setInt32(o + 8, sv.getInt32(p + 8, true), true)
      this.o = o + 12
    } else {
      if (src[p + 5] !== MINUS || src[p + 11] !== 0x20 || src[p + 14] !== COLON || src[p + 17] !== COLON) return false
      const tail = this.offsetWords
      const n = 20 + tail.length * 4
      if (this.o + n > this.out.length) this.grow(n)
      const ov = this.ov
      const o = this.o
      ov.setInt32(o, sv.getInt32(p, true), true)
      ov.setInt32(o + 4, sv.getInt32(p + 4, true), true)
      ov.setInt32(o + 8, sv.getInt32(p + 8, true), true)
      this.out[o + 11] = 0x54 // T in place of the space
      ov.setInt32(o + 12, sv.getInt32(p + 12, true), true)
      ov.setInt32(o + 16, sv.getInt32(p + 16, true), true)
      for (let k = 0; k < tail.length; k++) ov.setInt32(o + 20 + 4 * k, tail[k]!, true)
      this.o = o + 20 + this.offset.length + 1
    }
    this.p = close + 1
    return true
  }

  /** After an object member: past a comma (true, another member follows) or the closing brace (false). */
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

  // Values

  /** Content the specs do not describe: passed on with its keys camelCased (camelCaseDeep). */
  json (depth: number): void {
    if (depth > MAX_DEPTH) throw GIVE_UP
    const c = this.peek()
    if (c === QUOTE) {
      this.copyString()
    } else if (c === OPEN_BRACE) {
      this.p++
      this.byte(OPEN_BRACE)
      if (this.peek() === CLOSE_BRACE) {
        this.p++
        this.byte(CLOSE_BRACE)
        return
      }
      // Our names so far: a short list (objects here have a few keys), a set past 16.
      const names: string[] = []
      let many: Set<string> | undefined
      for (;;) {
        if (this.peek() !== QUOTE) throw GIVE_UP
        const start = this.p
        const close = this.scanString()
        if (this.skipping) {
          // Validated only: no names to keep apart.
        } else {
          const key = this.otherKey(start + 1, close, this.escaped)
          // Two keys camelCased alike (or one repeated): JSON.parse keeps the last; leave it to the reference path.
          if (many !== undefined ? many.has(key.name) : names.includes(key.name)) throw GIVE_UP
          if (names.length > 0) this.byte(COMMA)
          names.push(key.name)
          if (many !== undefined) many.add(key.name)
          else if (names.length > 16) many = new Set(names)
          this.bytes(key.out)
        }
        this.expect(COLON)
        this.json(depth + 1)
        if (!this.moreMembers()) break
      }
      this.byte(CLOSE_BRACE)
    } else if (c === OPEN_BRACKET) {
      this.array(() => this.json(depth + 1))
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const start = this.p
      if (this.scanNumber()) {
        this.copy(start, this.p)
      } else {
        const n = this.numberAt(start)
        this.text(Number.isFinite(n) ? String(n) : 'null')
      }
    } else {
      this.bytes(this.literal())
    }
  }

  /**
   * The key between `from` and `to` (its quotes excluded) that no spec
   * names: camelCased as camelCaseDeep does. A key seen before is found by
   * its bytes, without decoding it.
   */
  otherKey (from: number, to: number, escaped: boolean): OtherKey {
    const src = this.src
    const n = to - from
    const hash = escaped ? 0 : hashOf(src, from, to)
    if (!escaped) {
      for (const key of otherKeys.get(hash) ?? []) if (key.raw.length === n && this.bytesAt(key.raw, from)) return key
    }
    const name = cachedCamelCase(escaped ? JSON.parse(src.toString('utf8', from - 1, to + 1)) as string : src.toString('utf8', from, to))
    const key = { raw: Buffer.from(src.subarray(from, to)), name, out: Buffer.from(`${JSON.stringify(name)}:`) }
    if (!escaped && otherKeyCount < KEY_CACHE_LIMIT) {
      otherKeyCount++
      otherKeys.set(hash, [...(otherKeys.get(hash) ?? []), key])
    }
    return key
  }

  /** A number token as a JS number (it is not plain). */
  numberAt (start: number): number {
    return Number(this.src.toString('latin1', start, this.p))
  }

  value (field: Field, depth: number): void {
    const c = this.peek()
    if (c === 0x6e) { // null
      this.literal()
      if (field.nullable || field.kind === JSON_CONTENT) {
        this.bytes(NULL)
        if (field.second !== undefined) {
          this.bytes(field.second)
          this.bytes(NULL)
        }
        return
      }
      throw GIVE_UP
    }
    switch (field.kind) {
      case STRING: {
        const start = this.p
        if (c === QUOTE) {
          if (field.emptyAsNull && this.src[start + 1] === QUOTE) {
            this.p = start + 2
            this.bytes(NULL)
          } else {
            this.copyString()
          }
          return
        }
        if (c !== MINUS && (c < ZERO || c > NINE)) throw GIVE_UP
        const plain = this.scanNumber()
        this.byte(QUOTE)
        if (plain) this.copy(start, this.p)
        else this.text(String(this.numberAt(start)))
        this.byte(QUOTE)
        return
      }
      case INTEGER:
      case NUMBER: {
        const start = this.p
        let n: number
        if (c === QUOTE) {
          const close = this.scanString()
          const first = this.src[start + 1]!
          if (!this.escaped && (first === MINUS || (first >= ZERO && first <= NINE))) {
            // A number sent as a string, usually in its shortest form: its digits pass through.
            this.p = start + 1
            const plain = this.scanNumber()
            const whole = this.p === close
            this.p = close + 1
            if (whole && (plain === PLAIN_INTEGER || (plain === PLAIN_DECIMAL && field.kind === NUMBER))) {
              this.copy(start + 1, close)
              return
            }
          }
          const s = this.stringValue(start, close)
          if (s.trim() === '') throw GIVE_UP
          n = Number(s)
        } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
          const plain = this.scanNumber()
          if (plain === PLAIN_INTEGER || (plain === PLAIN_DECIMAL && field.kind === NUMBER)) {
            this.copy(start, this.p)
            return
          }
          n = this.numberAt(start)
        } else {
          throw GIVE_UP
        }
        if (!Number.isFinite(n) || (field.kind === INTEGER && !Number.isInteger(n))) throw GIVE_UP
        this.text(String(n))
        return
      }
      case FLAG: {
        const start = this.p
        let on: boolean
        if (c === QUOTE) {
          const close = this.scanString()
          if (close !== start + 2 || this.escaped) throw GIVE_UP
          const d = this.src[start + 1]
          if (d !== 0x31 && d !== ZERO) throw GIVE_UP
          on = d === 0x31
        } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
          this.scanNumber()
          const n = this.p === start + 1 ? this.src[start]! - ZERO : this.numberAt(start)
          if (n !== 0 && n !== 1) throw GIVE_UP
          on = n === 1
        } else {
          const word = this.literal()
          if (word === NULL) throw GIVE_UP
          on = word === TRUE
        }
        this.bytes(on ? TRUE : FALSE)
        return
      }
      case DATE:
      case DATETIME: {
        if (c !== QUOTE) throw GIVE_UP
        if (this.dateFast(field.kind)) return
        const start = this.p
        const close = this.scanString()
        if (field.emptyAsNull && close === start + 1) {
          this.bytes(NULL)
          return
        }
        if (field.kind === DATETIME && !this.escaped && this.fractionFast(start + 1, close)) return
        const s = this.stringValue(start, close)
        this.text(JSON.stringify(field.kind === DATE ? toIsoDate(s) : toIsoDateTime(s, this.offsetText)))
        return
      }
      case DATE_WITH_TIME: {
        if (c !== QUOTE) throw GIVE_UP
        const start = this.p
        const close = this.scanString()
        const second = field.second!
        if (field.emptyAsNull && close === start + 1) {
          this.bytes(NULL)
          this.bytes(second)
          this.bytes(NULL)
          return
        }
        if (!this.escaped && this.dateWithTimeFast(start + 1, close, second)) return
        const s = this.stringValue(start, close)
        this.text(JSON.stringify(toIsoDate(s)))
        this.bytes(second)
        this.text(JSON.stringify(toIsoDateTime(s, this.offsetText)))
        return
      }
      case JSON_CONTENT:
        this.json(depth + 1)
        return
      case RECORD:
        this.record(field.record!, depth + 1)
        return
      case RECORD_ARRAY: {
        if (c !== OPEN_BRACKET) throw GIVE_UP
        this.items(field.record!, depth + 1)
        return
      }
      case JSON_ARRAY:
        if (c !== OPEN_BRACKET) throw GIVE_UP
        this.json(depth + 1)
    }
  }

  /**
   * A date-time with a fraction, `YYYY-MM-DD HH:MM:SS.S` (dateFast takes the
   * shapes of fixed length), byte for byte what toIsoDateTime makes of it,
   * from the string between `from` and `to` (validated, without escapes).
   * False: take the general path.
   */
  fractionFast (from: number, to: number): boolean {
    const src = this.src
    // Byte positions are character positions only in ASCII.
    for (let i = from, last = Math.min(to, from + 19); i < last; i++) if (src[i]! >= 0x80) return false
    if (to - from <= 19 || src[from + 4] !== MINUS || src[from + 10] !== 0x20 || src[from + 13] !== COLON || src[from + 16] !== COLON || src[from + 19] !== 0x2e) return false
    this.dateTimeOut(from, to)
    return true
  }

  /** `"YYYY-MM-DDTHH:MM:SS[.S]<offset>"` from the checked `YYYY-MM-DD HH:MM:SS[.S]` between `from` and `to`. */
  dateTimeOut (from: number, to: number): void {
    this.copy(from - 1, from + 10)
    this.byte(0x54) // T
    this.copy(from + 11, to)
    this.bytes(this.offset)
    this.byte(QUOTE)
  }

  /**
   * The usual `YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DD HH:MM:SS.S` of a
   * date-with-time field, between `from` and `to` (validated, without
   * escapes), written as its date, `second` and its date-time: byte for byte
   * what toIsoDate and toIsoDateTime make of it. Only digits where digits
   * belong (toIsoDate checks them; a date-time of other characters keeps its
   * own text there). False: take the general path.
   */
  dateWithTimeFast (from: number, to: number, second: Buffer): boolean {
    const src = this.src
    const n = to - from
    if (n !== 19 && !(n >= 21 && src[from + 19] === 0x2e)) return false
    for (let i = 0; i < n; i++) {
      const c = src[from + i]!
      if (i === 4 || i === 7) {
        if (c !== MINUS) return false
      } else if (i === 10) {
        if (c !== 0x20) return false
      } else if (i === 13 || i === 16) {
        if (c !== COLON) return false
      } else if (i !== 19 && (c < ZERO || c > NINE)) {
        return false
      }
    }
    this.copy(from - 1, from + 10)
    this.byte(QUOTE)
    this.bytes(second)
    this.dateTimeOut(from, to)
    return true
  }

  record (plan: Plan, depth: number): void {
    if (depth > MAX_DEPTH) throw GIVE_UP
    this.expect(OPEN_BRACE)
    this.byte(OPEN_BRACE)
    const serial = ++objectSerial
    let required = 0
    let previous: Field | undefined
    let first = true
    let unknown: Set<string> | undefined
    if (this.peek() === CLOSE_BRACE) {
      this.p++
    } else {
      for (;;) {
        if (this.peek() !== QUOTE) throw GIVE_UP
        const start = this.p + 1
        // The hub writes a record's keys in one order: try the key that came next last time first.
        const predicted = previous === undefined ? plan.first : previous.next
        let field = predicted
        let close: number
        if (field !== undefined && this.memberIs(field, start)) {
          // `key":` in one go: past the colon.
          close = start + field.key.length
          this.p = close + 2
        } else {
          if (field !== undefined && this.keyIs(field.key, start)) {
            this.p = start + field.key.length + 1
          } else {
            field = this.match(plan, this.scanKey(), start, this.p - 1)
          }
          close = this.p - 1
          this.expect(COLON)
        }
        if (field !== undefined) {
          if (field !== predicted) {
            if (previous === undefined) plan.first = field
            else previous.next = field
          }
          previous = field
          if (plan.seen[field.index] === serial) throw GIVE_UP
          plan.seen[field.index] = serial
          required |= field.requiredBit
          this.name(field, first)
          first = false
          this.value(field, depth)
        } else {
          if (!first) this.byte(COMMA)
          first = false
          // scanKey gave up on escaped keys.
          const { name, out } = this.otherKey(start, close, false)
          // An unknown key landing on one of our names, or twice on one name: the reference path decides.
          if (plan.names.has(name)) throw GIVE_UP
          unknown ??= new Set()
          if (unknown.has(name)) throw GIVE_UP
          unknown.add(name)
          this.bytes(out)
          this.json(depth + 1)
        }
        if (!this.moreMembers()) break
      }
    }
    if (required !== plan.requiredMask) throw GIVE_UP
    this.byte(CLOSE_BRACE)
  }

  /** Whether `key":` starts at `start` (the usual compact member), compared a word at a time. */
  memberIs (field: Field, start: number): boolean {
    const at = field.keyAt
    if (at.length === 0 || start + field.key.length + 2 > this.end) return false
    const words = field.keyWords
    const sv = this.sv
    for (let k = 0; k < at.length; k++) if (sv.getInt32(start + at[k]!, true) !== words[k]) return false
    return true
  }

  /** Whether the key starting at `start` is exactly these bytes (a spec name: no quote or escape in it). */
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

  /** A field's `"ourName":`, after a comma unless it is the first member, written a word at a time. */
  name (field: Field, first: boolean): void {
    const words = first ? field.outWords : field.commaWords
    const n = words.length * 4
    if (this.o + n > this.out.length) this.grow(n)
    const ov = this.ov
    let o = this.o
    for (let k = 0; k < words.length; k++, o += 4) ov.setInt32(o, words[k]!, true)
    this.o += first ? field.out.length : field.out.length + 1
  }

  match (plan: Plan, hash: number, start: number, end: number): Field | undefined {
    const candidates = plan.byHash.get(hash)
    if (candidates === undefined) return undefined
    const n = end - start
    for (const field of candidates) if (field.key.length === n && this.bytesAt(field.key, start)) return field
    return undefined
  }

  /** An array of records; returns how many. */
  items (plan: Plan, depth: number): number {
    return this.array(() => this.record(plan, depth))
  }

  /** An array, each element read and written by `element`; returns how many. */
  array (element: () => void): number {
    this.expect(OPEN_BRACKET)
    this.byte(OPEN_BRACKET)
    let count = 0
    if (this.peek() === CLOSE_BRACKET) {
      this.p++
    } else {
      for (;;) {
        element()
        count++
        const next = this.peek()
        this.p++
        if (next === COMMA) {
          this.byte(COMMA)
          continue
        }
        if (next === CLOSE_BRACKET) break
        throw GIVE_UP
      }
    }
    this.byte(CLOSE_BRACKET)
    return count
  }

  /** `{ ..., "key": [items], ... }`: the other members are validated and left out. */
  keyed (plan: Plan, key: Buffer, keyText: string): number {
    this.expect(OPEN_BRACE)
    let count: number | undefined
    if (this.peek() !== CLOSE_BRACE) {
      for (;;) {
        if (this.peek() !== QUOTE) throw GIVE_UP
        const start = this.p + 1
        const close = this.scanString()
        // An escaped key could spell the list key: only then is it worth decoding, and then the reference path reads it.
        if (this.escaped && this.stringValue(start - 1, close) === keyText) throw GIVE_UP
        this.expect(COLON)
        if (!this.escaped && close - start === key.length && this.src.compare(key, 0, key.length, start, close) === 0) {
          if (count !== undefined || this.peek() !== OPEN_BRACKET) throw GIVE_UP
          count = this.items(plan, 1)
        } else {
          // Not ours to answer: validated as JSON, written nowhere.
          const mark = this.o
          this.skipping = true
          this.json(1)
          this.skipping = false
          this.o = mark
        }
        if (!this.moreMembers()) break
      }
    } else {
      this.p++
    }
    // Missing: the reference path looks for drift (one other array) and logs it.
    if (count === undefined) throw GIVE_UP
    return count
  }
}

function view (b: Buffer): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength)
}

function isHex (c: number): boolean {
  return (c >= ZERO && c <= NINE) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46)
}

export function compileTranscoder (shape: TranscodeShape, options: Options): Transcoder {
  const plan = compilePlan(shape.item, new Set())
  const offset = Buffer.from(options.offset, 'latin1')
  const offsetWords = wordsOf(Buffer.concat([offset, Buffer.from('"')]))
  const key = shape.type === 'keyed-list' ? Buffer.from(shape.key) : undefined
  return function transcode (body, frame) {
    // JSON.parse would see U+FFFD where the bytes are not UTF-8: the reference path does it alike.
    if (!isUtf8(body)) return undefined
    const need = body.length + (body.length >> 3) + 64
    const run = new Run(body, scratch.length >= need ? scratch : Buffer.allocUnsafeSlow(need), offset, offsetWords, options.offset)
    let count: number | undefined
    try {
      switch (shape.type) {
        case 'list':
          count = run.items(plan, 1)
          break
        case 'keyed-list':
          count = run.keyed(plan, key!, (shape as { key: string }).key)
          break
        case 'records':
          if (run.peek() === OPEN_BRACKET) {
            count = run.items(plan, 1)
          } else {
            run.byte(OPEN_BRACKET)
            run.record(plan, 1)
            run.byte(CLOSE_BRACKET)
            count = 1
          }
          break
        case 'record':
          run.record(plan, 1)
      }
      if (run.peek() !== -1) return undefined
    } catch (error) {
      if (error === GIVE_UP) return undefined
      throw error
    } finally {
      if (run.out.length > scratch.length && run.out.length <= SCRATCH_KEEP_BYTES) scratch = run.out
    }
    const json = run.out.subarray(0, run.o)
    if (frame === undefined) {
      const copy = Buffer.from(json)
      return { json: copy, framed: copy, count }
    }
    const framed = Buffer.concat([frame.head, json, frame.tail(count)])
    return { json: framed.subarray(frame.head.length, frame.head.length + run.o), framed, count }
  }
}
