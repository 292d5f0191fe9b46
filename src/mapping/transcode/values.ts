import {
  DATE,
  DATE_WITH_TIME,
  DATETIME,
  FLAG,
  INTEGER,
  JSON_ARRAY,
  JSON_CONTENT,
  NUMBER,
  RECORD,
  RECORD_ARRAY,
  STRING,
  type Field,
  type Plan
} from './plan.ts'
import { UUID } from './plan.ts'
import { isCalendarDay } from '../../domain/dates.ts'
import { DRIFT, OMIT } from '../drift.ts'
import {
  COLON,
  FALSE,
  GIVE_UP,
  MINUS,
  NINE,
  NOT_PLAIN,
  OPEN_BRACKET,
  PLAIN_DECIMAL,
  PLAIN_INTEGER,
  QUOTE,
  Reader,
  TRUE,
  ZERO
} from './reader.ts'

/**
 * The values of the fields a spec names. Each kind has byte shortcuts for
 * the forms the hub usually sends (a string passed through still escaped, a
 * number already in its shortest form, a 0/1 flag, the usual date shapes
 * rewritten in words); any other value is decoded and converted by its
 * field's rules (fields.ts), the very conversion the normalizer makes, and a
 * value the rules refuse gives up, for the reference path to report. The
 * document's structure (records, lists, unknown content) is document.ts's.
 */
export abstract class Values extends Reader {
  readonly offset: Buffer
  /** The offset and the closing quote, as little-endian words (dateFast). */
  readonly offsetWords: Int32Array

  constructor (offset: Buffer, offsetWords: Int32Array) {
    super()
    this.offset = offset
    this.offsetWords = offsetWords
  }

  /** Content the specs do not describe (document.ts). */
  abstract json (depth: number): void
  /** A record of `plan`'s resource (document.ts). */
  abstract record (plan: Plan, depth: number): void
  /** A list of them; returns how many (document.ts). */
  abstract items (plan: Plan, depth: number): number
  /** Moves past one value, validated, writing nothing (document.ts). */
  abstract skip (depth: number): void

  value (field: Field, depth: number): void {
    const c = this.peek()
    if (c === 0x6e) { // null
      this.literal()
      if (field.nullOut === undefined) throw GIVE_UP
      this.bytes(field.nullOut)
      return
    }
    switch (field.kind) {
      case UUID: {
        if (c !== QUOTE) break
        const start = this.p
        const close = this.scanString()
        if (!this.escaped && uuidAt(this.src, start + 1, close)) this.copy(start, close + 1)
        else this.ruled(field, this.stringValue(start, close))
        return
      }
      case STRING: {
        const start = this.p
        if (c === QUOTE) {
          if (field.emptyOut !== undefined && this.src[start + 1] === QUOTE) {
            this.p = start + 2
            this.bytes(field.emptyOut)
          } else {
            this.copyString()
          }
          return
        }
        if (c !== MINUS && (c < ZERO || c > NINE)) break
        if (this.scanNumber() === NOT_PLAIN) {
          this.p = start
          break
        }
        this.byte(QUOTE)
        this.copy(start, this.p)
        this.byte(QUOTE)
        return
      }
      case INTEGER:
      case NUMBER: {
        const start = this.p
        if (c === QUOTE) {
          const close = this.scanString()
          const first = this.src[start + 1]!
          if (!this.escaped && (first === MINUS || (first >= ZERO && first <= NINE))) {
            // A number sent as a string, usually in its shortest form: its digits pass through.
            this.p = start + 1
            const plain = this.scanNumber()
            const whole = this.p === close
            this.p = close + 1
            if (
              whole &&
              (plain === PLAIN_INTEGER || (plain === PLAIN_DECIMAL && field.kind === NUMBER))
            ) {
              this.copy(start + 1, close)
              this.drift |= DRIFT.numberString
              return
            }
          }
          this.ruled(field, this.stringValue(start, close))
          return
        }
        if (c === MINUS || (c >= ZERO && c <= NINE)) {
          const plain = this.scanNumber()
          if (plain === PLAIN_INTEGER || (plain === PLAIN_DECIMAL && field.kind === NUMBER)) {
            this.copy(start, this.p)
            return
          }
          this.p = start
        }
        break
      }
      case FLAG: {
        const start = this.p
        if (c === QUOTE) {
          const d = this.src[start + 1]
          if ((d === 0x31 || d === ZERO) && this.src[start + 2] === QUOTE) {
            this.p = start + 3
            this.bytes(d === 0x31 ? TRUE : FALSE)
            this.drift |= DRIFT.flagString
            return
          }
        } else if (c === 0x31 || c === ZERO) {
          this.scanNumber()
          if (this.p === start + 1) {
            this.bytes(c === 0x31 ? TRUE : FALSE)
            return
          }
          this.p = start
        } else if (c === 0x74 || c === 0x66) { // true, false
          this.bytes(this.literal())
          return
        }
        break
      }
      case DATE:
      case DATETIME: {
        if (c !== QUOTE) break
        if (this.dateFast(field.kind)) return
        const start = this.p
        const close = this.scanString()
        if (field.emptyOut !== undefined && close === start + 1) {
          this.bytes(field.emptyOut)
          return
        }
        if (field.kind === DATETIME && !this.escaped && this.fractionFast(start + 1, close)) return
        this.ruled(field, this.stringValue(start, close))
        return
      }
      case DATE_WITH_TIME: {
        if (c !== QUOTE) break
        const start = this.p
        const close = this.scanString()
        if (field.emptyOut !== undefined && close === start + 1) {
          this.bytes(field.emptyOut)
          return
        }
        if (!this.escaped && this.dateWithTimeFast(start + 1, close, field.second!)) return
        this.ruled(field, this.stringValue(start, close))
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
        return
    }
    // A value none of the shortcuts takes: the rules decide.
    const start = this.p
    this.skip(depth + 1)
    this.ruled(field, JSON.parse(this.src.toString('utf8', start, this.p)))
  }

  /**
   * The hub's value (decoded) as its field's rules convert it (fields.ts),
   * written as JSON; under the second name too for a date-with-time field.
   * A value they refuse gives up: the reference path reports it.
   */
  ruled (field: Field, value: unknown): void {
    const rules = field.rules
    if (rules === undefined) throw GIVE_UP
    let first: string
    let second: string | undefined
    try {
      const converted = rules.convert(value)
      // No value for the field: its name is written already; the reference path leaves it out.
      if (converted === OMIT) throw GIVE_UP
      first = JSON.stringify(converted)
      if (rules.second !== undefined) {
        const moment = rules.second(value)
        // No time for a day sent alone: the second name is left out.
        if (moment !== OMIT) second = JSON.stringify(moment)
      }
    } catch {
      throw GIVE_UP
    }
    this.text(first)
    if (second !== undefined) {
      this.bytes(field.second!)
      this.text(second)
    }
  }

  /**
   * At a date's opening quote: the usual compact shapes (`YYYY-MM-DD` for a
   * date, `YYYY-MM-DD HH:MM:SS` for a date-time), a real day and time,
   * written in words, byte for byte what the rules (fields.ts) make of them.
   * False, moving nothing: take the general path.
   */
  dateFast (kind: number): boolean {
    const src = this.src
    const sv = this.sv
    const p = this.p
    const close = kind === DATE ? p + 11 : p + 20
    if (close >= this.end || src[close] !== QUOTE) return false
    // Digits where digits belong, each separator in its place: no quote or escape between.
    if (src[p + 5] !== MINUS || src[p + 8] !== MINUS || !dayAt(src, p + 1)) return false
    if (kind === DATE) {
      if (this.o + 12 > this.out.length) this.grow(12)
      const ov = this.ov
      const o = this.o
      ov.setInt32(o, sv.getInt32(p, true), true)
      ov.setInt32(o + 4, sv.getInt32(p + 4, true), true)
      ov.setInt32(o + 8, sv.getInt32(p + 8, true), true)
      this.o = o + 12
    } else {
      if (src[p + 11] !== 0x20 || src[p + 14] !== COLON || src[p + 17] !== COLON) return false
      if (!timeAt(src, p + 12)) return false
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

  /**
   * A date-time with a fraction, `YYYY-MM-DD HH:MM:SS.S` (dateFast takes the
   * shapes of fixed length), byte for byte what the rules make of it,
   * from the string between `from` and `to` (validated, without escapes).
   * False: take the general path.
   */
  fractionFast (from: number, to: number): boolean {
    const src = this.src
    if (to - from < 21 || src[from + 4] !== MINUS || src[from + 7] !== MINUS) return false
    if (src[from + 10] !== 0x20 || src[from + 13] !== COLON) return false
    if (src[from + 16] !== COLON || src[from + 19] !== 0x2e) return false
    if (!dayAt(src, from) || !timeAt(src, from + 11)) return false
    for (let i = from + 20; i < to; i++) if (src[i]! < ZERO || src[i]! > NINE) return false
    this.dateTimeOut(from, to)
    return true
  }

  /**
   * `"YYYY-MM-DDTHH:MM:SS[.S]<offset>"` from the checked `YYYY-MM-DD HH:MM:SS[.S]` between `from`
   * and `to`.
   */
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
   * what the rules (fields.ts) make of it. Only digits where digits belong,
   * a real day and time. False: take the general path.
   */
  dateWithTimeFast (from: number, to: number, second: Buffer): boolean {
    const src = this.src
    const n = to - from
    if (n !== 19 && !(n >= 21 && src[from + 19] === 0x2e)) return false
    if (src[from + 4] !== MINUS || src[from + 7] !== MINUS || src[from + 10] !== 0x20) return false
    if (src[from + 13] !== COLON || src[from + 16] !== COLON) return false
    // The digits of the day and the time, checked as they are read; then the fraction's.
    if (!dayAt(src, from) || !timeAt(src, from + 11)) return false
    for (let i = from + 20; i < to; i++) if (src[i]! < ZERO || src[i]! > NINE) return false
    this.copy(from - 1, from + 10)
    this.byte(QUOTE)
    this.bytes(second)
    this.dateTimeOut(from, to)
    return true
  }
}

/** The number the two ASCII digits at `at` write; -1 where one is not a digit. */
function twoDigits (src: Buffer, at: number): number {
  const a = src[at]! - ZERO
  const b = src[at + 1]! - ZERO
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1
}

/**
 * Whether `YYYY-MM-DD` at `at` (separators checked by the caller) is a day
 * of the calendar. Straight-line, on the hot path: the year is only made a
 * number for the days past the 28th, which not every month has.
 */
function dayAt (src: Buffer, at: number): boolean {
  const century = twoDigits(src, at)
  const year = twoDigits(src, at + 2)
  const month = twoDigits(src, at + 5)
  const day = twoDigits(src, at + 8)
  if (century < 0 || year < 0 || month < 1 || month > 12 || day < 1) return false
  return day <= 28 || isCalendarDay(century * 100 + year, month, day)
}

/** Whether `HH:MM:SS` at `at` (separators checked by the caller) is a time of day. */
function timeAt (src: Buffer, at: number): boolean {
  const hours = twoDigits(src, at)
  const minutes = twoDigits(src, at + 3)
  const seconds = twoDigits(src, at + 6)
  return hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59 && seconds >= 0 && seconds <= 59
}

/** Whether the bytes from `from` to `to` are a UUID (fields.ts's check: hex digits 8-4-4-4-12). */
function uuidAt (src: Buffer, from: number, to: number): boolean {
  if (to - from !== 36) return false
  for (let i = 0; i < 36; i++) {
    const c = src[from + i]!
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== MINUS) return false
    } else if (!((c >= ZERO && c <= NINE) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66))) {
      return false
    }
  }
  return true
}
