import { HUB_EXTRA } from '../../catalogue/resource-spec.ts'
import { cachedCamelCase } from '../fields.ts'
import type { Field, Plan } from './plan.ts'
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  GIVE_UP,
  hashOf,
  MINUS,
  NINE,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  ZERO
} from './reader.ts'
import { Values } from './values.ts'

const MAX_DEPTH = 64
const HUB_EXTRA_OPEN = Buffer.from(`${JSON.stringify(HUB_EXTRA)}:{`)
const COMMA_HUB_EXTRA = Buffer.from(`,${JSON.stringify(HUB_EXTRA)}:{`)
const COMMA_BYTE = Buffer.from(',')
const CLOSE_BRACE_BYTE = Buffer.from('}')
const KEY_CACHE_LIMIT = 10_000

/** A key the specs do not name: its bytes, its camelCased name and that name's `"name":` bytes. */
export interface OtherKey {
  raw: Buffer
  name: string
  out: Buffer
}

interface KeyMemo {
  readonly byHash: Map<number, OtherKey[]>
  count: number
}

/**
 * The transcoding of one answer after another (begin, then the shape's
 * walk): the document's structure (records of a plan, lists, keyed lists,
 * content the specs do not describe) over the values (values.ts), the input
 * (reader.ts) and the output (writer.ts). A transcoder set (index.ts) keeps
 * one, and with it what its runs share: the memo of unknown keys and the
 * serial of the objects read.
 */
export class Run extends Values {
  /** Unescaped keys the specs do not name, by the hash of their bytes: the same few recur. */
  readonly keys: KeyMemo = { byHash: new Map(), count: 0 }
  /**
   * Numbers every object read, across runs (plans outlive a run), so that a
   * field stamped with the current serial in Plan.seen was seen in this
   * object. A double: 2^53 objects before it could repeat.
   */
  serial = 0

  record (plan: Plan, depth: number): void {
    if (depth > MAX_DEPTH) throw GIVE_UP
    this.expect(OPEN_BRACE)
    this.byte(OPEN_BRACE)
    const serial = ++this.serial
    const { order, seen } = plan
    let required = 0
    let previous: Field | undefined
    let first = true
    let unknown: Set<string> | undefined
    /** Where the unknown members were written (from, to, …): moved under `hubExtra` at the end. */
    let extras: number[] | undefined
    if (this.peek() === CLOSE_BRACE) {
      this.p++
    } else {
      for (;;) {
        if (this.peek() !== QUOTE) throw GIVE_UP
        const start = this.p + 1
        // The hub writes a record's keys in one order: try the key that came next last time first.
        const predicted = previous === undefined ? order.first : (previous as any).next
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
            if (previous === undefined) order.first = field
            else (previous as any).next = field
          }
          previous = field
          if (seen[field.index] === serial) throw GIVE_UP
          seen[field.index] = serial
          required |= field.requiredBit
          this.name(field, first)
          first = false
          this.value(field, depth)
        } else {
          // scanKey gave up on escaped keys.
          const { name, out } = this.otherKey(start, close, false)
          // An unknown key landing on one of our names, or twice on one name: the reference path
          // decides.
          if (plan.names.has(name)) throw GIVE_UP
          unknown ??= new Set()
          if (unknown.has(name)) throw GIVE_UP
          unknown.add(name)
          // Written in place, without a comma; hubExtra() moves it.
          const from = this.o
          this.bytes(out)
          this.json(depth + 1)
          extras ??= []
          extras.push(from, this.o)
        }
        if (!this.moreMembers()) break
      }
    }
    if (required !== plan.requiredMask) throw GIVE_UP
    if (extras !== undefined) this.hubExtra(extras, !first)
    this.byte(CLOSE_BRACE)
  }

  /**
   * The unknown members of the record being written, at `extras` (output
   * offsets, from and to in pairs, in order), moved out of the way of ours
   * into one `"hubExtra":{…}` member at its end, as the normalizer answers
   * them; `comma` when one of ours comes before it.
   */
  hubExtra (extras: readonly number[], comma: boolean): void {
    const parts: Buffer[] = [comma ? COMMA_HUB_EXTRA : HUB_EXTRA_OPEN]
    for (let k = 0; k < extras.length; k += 2) {
      if (k > 0) parts.push(COMMA_BYTE)
      parts.push(this.out.subarray(extras[k]!, extras[k + 1]!))
    }
    parts.push(CLOSE_BRACE_BYTE)
    // A copy: the members' bytes are overwritten next.
    const moved = Buffer.concat(parts)
    let o = extras[0]!
    for (let k = 0; k < extras.length; k += 2) {
      const end = k + 2 < extras.length ? extras[k + 2]! : this.o
      this.out.copyWithin(o, extras[k + 1]!, end)
      o += end - extras[k + 1]!
    }
    this.o = o
    this.bytes(moved)
  }

  /** Whether `key":` starts at `start` (the usual compact member), compared a word at a time. */
  memberIs (field: Field, start: number): boolean {
    const at = field.keyAt
    if (at.length === 0 || start + field.key.length + 2 > this.end) return false
    const words = field.keyWords
    const sv = this.sv
    for (let k = 0; k < at.length; k++) {
      if (sv.getInt32(start + at[k]!, true) !== words[k]) return false
    }
    return true
  }

  /**
   * A field's `"ourName":`, after a comma unless it is the first member, written a word at a time.
   */
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
    for (const field of candidates) {
      if (field.key.length === n && this.bytesAt(field.key, start)) return field
    }
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
        // An escaped key could spell the list key: only then is it worth decoding, and then the
        // reference path reads it.
        if (this.escaped && this.stringValue(start - 1, close) === keyText) throw GIVE_UP
        this.expect(COLON)
        if (
          !this.escaped &&
          close - start === key.length &&
          this.src.compare(key, 0, key.length, start, close) === 0
        ) {
          if (count !== undefined || this.peek() !== OPEN_BRACKET) throw GIVE_UP
          count = this.items(plan, 1)
        } else {
          // Not ours to answer: validated as JSON, written nowhere.
          this.skip(1)
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
          // Two keys camelCased alike (or one repeated): JSON.parse keeps the last; leave it to the
          // reference path.
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

  skip (depth: number): void {
    const mark = this.o
    this.skipping = true
    this.json(depth)
    this.skipping = false
    this.o = mark
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
      for (const key of this.keys.byHash.get(hash) ?? []) {
        if (key.raw.length === n && this.bytesAt(key.raw, from)) return key
      }
    }
    const name = cachedCamelCase(
      escaped
        ? (JSON.parse(src.toString('utf8', from - 1, to + 1)) as string)
        : src.toString('utf8', from, to)
    )
    const key = {
      raw: Buffer.from(src.subarray(from, to)),
      name,
      out: Buffer.from(`${JSON.stringify(name)}:`)
    }
    const keys = this.keys
    if (!escaped && keys.count < KEY_CACHE_LIMIT) {
      keys.count++
      keys.byHash.set(hash, [...(keys.byHash.get(hash) ?? []), key])
    }
    return key
  }
}
