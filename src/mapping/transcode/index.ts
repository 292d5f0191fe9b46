import { isUtf8 } from 'node:buffer'
import type { ResourceSpec } from '../../catalogue/resource-spec.ts'
import type { Tolerance } from '../drift.ts'
import { Run } from './document.ts'
import { compilePlan } from './plan.ts'
import { CLOSE_BRACKET, GIVE_UP, OPEN_BRACKET } from './reader.ts'
import { wordsOf } from './writer.ts'

/**
 * The fast path from the hub's JSON bytes to ours, compiled once per
 * operation from the same resource specs as the normalizer (normalize.ts).
 *
 * It reads the hub's body as bytes and writes our JSON as bytes in one pass:
 * no parsed tree, no normalized tree, no JSON.stringify. Keys are recognised
 * by a hash computed while they are scanned and written as precomputed
 * `"camelName":` bytes; strings pass through as they are (still escaped);
 * only the values that change (dates, flags, numbers sent as strings) are
 * looked at, and each by its field's rules (fields.ts). Measured on a
 * 20-document SP2 list (54 KB): 0.47 ms for JSON.parse + normalize +
 * JSON.stringify, about 0.20 ms here.
 *
 * It handles the well-formed answer and nothing else: on anything unusual
 * (a value of the wrong type, a missing identity field, a duplicate key, an
 * escaped key, drift of the list key, invalid UTF-8, malformed JSON) it gives
 * up and returns undefined, and the caller takes the reference path (JSON.parse
 * and the compiled normalizer), which decides and reports exactly as before.
 * The two are held to the same answers by a differential test
 * (test/mapping/transcode.test.ts).
 *
 * The parts: plan.ts compiles a spec; reader.ts scans the input and
 * writer.ts writes the output; values.ts converts the fields' values;
 * document.ts walks records and lists. This module keeps what the
 * transcoders of one set share, and runs them.
 *
 * Written here rather than taken from a library: a streaming JSON tokenizer
 * (stream-json, @streamparser/json) emits tokens as JS values, which costs
 * more than JSON.parse itself; what makes this fast is never decoding the
 * bytes that do not change.
 */
export interface Transcoded {
  /** Our JSON for the `data` member, UTF-8 (a view into `framed`). */
  json: Buffer
  /**
   * `frame.head`, the JSON and `frame.tail(count)` in one buffer; the JSON alone without a frame.
   */
  framed: Buffer
  /** Items of a list answer; undefined for a record. */
  count: number | undefined
  /**
   * What the answer needed tolerated (DRIFT bits, mapping/drift.ts); 0 for an answer in the
   * documented forms.
   */
  drift: number
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

/**
 * Per operation: the hub answers days that have a time of day as the day alone (a profile's
 * dateAnswered), and no time is answered for them.
 */
export interface ShapeOptions {
  dayOnly?: boolean
}

/**
 * Transcoders that share one output buffer, one memo of unknown keys and one object serial (a
 * thread compiles its own set).
 */
export interface TranscoderSet {
  compile (shape: TranscodeShape, options?: ShapeOptions): Transcoder
}

const NO_NULL_STRINGS: ReadonlySet<string> = new Set()

/**
 * The output is written into one buffer reused by every run of a set (runs
 * are synchronous), then copied once into a buffer of the exact size: a
 * fresh oversized buffer per answer made the garbage collector run for the
 * memory outside the heap (a Mark-Compact every ~200 ms at 400 answers of
 * 54 KB per second). A scratch grown past this size is not kept.
 */
const SCRATCH_KEEP_BYTES = 4 * 1024 * 1024

export function createTranscoders (options: Options): TranscoderSet {
  const offset = Buffer.from(options.offset, 'latin1')
  const offsetWords = wordsOf(Buffer.concat([offset, Buffer.from('"')]))
  // Runs are synchronous: one at a time, each done with the output before the next.
  const run = new Run(offset, offsetWords)
  let scratch: Buffer = Buffer.allocUnsafeSlow(64 * 1024)

  function compile (shape: TranscodeShape, { dayOnly = false }: ShapeOptions = {}): Transcoder {
    // The rules note what they tolerate in the run; null strings are the reference path's
    // (decode.ts gives it those answers).
    const tolerance: Tolerance = {
      note: (bit) => {
        run.drift |= bit
      },
      nullStrings: NO_NULL_STRINGS,
      dayOnly
    }
    const plan = compilePlan(shape.item, options.offset, undefined, tolerance)
    const key = shape.type === 'keyed-list' ? Buffer.from(shape.key) : undefined
    return function transcode (body, frame) {
      // JSON.parse would see U+FFFD where the bytes are not UTF-8: the reference path does it
      // alike.
      if (!isUtf8(body)) return undefined
      const need = body.length + (body.length >> 3) + 64
      run.begin(body, scratch.length >= need ? scratch : Buffer.allocUnsafeSlow(need))
      let count: number | undefined
      try {
        switch (shape.type) {
          case 'list':
            count = run.items(plan, 1)
            break
          case 'keyed-list':
            count = run.keyed(plan, key!, shape.key)
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
        if (run.out.length > scratch.length && run.out.length <= SCRATCH_KEEP_BYTES) {
          scratch = run.out
        }
      }
      const json = run.out.subarray(0, run.o)
      const { drift } = run
      if (frame === undefined) {
        const copy = Buffer.from(json)
        return { json: copy, framed: copy, count, drift }
      }
      const framed = Buffer.concat([frame.head, json, frame.tail(count)])
      return {
        json: framed.subarray(frame.head.length, frame.head.length + run.o),
        framed,
        count,
        drift
      }
    }
  }

  return { compile }
}

/** One transcoder with a set of its own. */
export function compileTranscoder (
  shape: TranscodeShape,
  options: Options & ShapeOptions
): Transcoder {
  return createTranscoders(options).compile(shape, options)
}
