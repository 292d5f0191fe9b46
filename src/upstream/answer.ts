/**
 * A hub answer as the gateway keeps and sends it: our JSON of `data`, framed
 * once in the lookup envelope, shared by every response made from it.
 */
import { envelopeAround } from '../schemas/envelope.ts'
import type { Transcoded } from '../mapping/transcode/index.ts'
import { entityTag } from './entity-tag.ts'

export interface CallResult {
  /**
   * Our JSON of the answer, UTF-8: the `data` member, encoded once per hub
   * answer and shared by every response made from it (coalesced and cached
   * ones): large SP2 lists are not serialized again for each caller.
   */
  json: Buffer
  /** Items of a list operation; undefined for a record. */
  count: number | undefined
  /**
   * The same answer as objects, parsed from `json` on demand (for routes that merge or reshape it).
   */
  readonly data: Record<string, unknown> | Array<Record<string, unknown>>
  upstreamStatus: number
  /** GET lookups: how the answer relates to the cache. */
  cache?: { cached: boolean, stale: boolean, ageSeconds: number, ttlSeconds: number }
  /**
   * The strong entity tag of `json` (entity-tag.ts): computed at its first
   * use and kept with the answer, so that every later response made from a
   * cached answer, and every 304, reuses it.
   */
  readonly etag: string
  /**
   * The whole lookup response, `{"data":...,"meta":{...}}`, as bytes. The
   * answer is copied into it once per hub call, and once more at its first
   * cache hit; every other response with the same meta sends the same bytes.
   */
  envelope (meta: { cached: boolean, stale: boolean }): Buffer
}

export interface Fetched {
  /** Our JSON: a view into `body`. */
  json: Buffer
  count: number | undefined
  upstreamStatus: number
  /**
   * The envelope of this answer for `meta.cached` = `cached` (not stale): first the fresh one, from
   * the first cache hit on the cached one.
   */
  body: Buffer
  cached: boolean
  /** The entity tag of `json`, once something asked for it (writes never do). */
  etag?: string
}

export function fetchedOf ({ json, count, framed }: Transcoded, upstreamStatus: number): Fetched {
  return { json, count, upstreamStatus, body: framed, cached: false }
}

function envelopeOf (fetched: Fetched, cached: boolean, stale: boolean): Buffer {
  if (!stale && cached === fetched.cached) return fetched.body
  const { body, json } = envelopeAround(fetched.json, { count: fetched.count, cached, stale })
  if (cached && !stale) {
    // Every later hit sends this one: keep it instead of the fresh one (the answer stays in memory
    // once).
    fetched.body = body
    fetched.cached = true
    fetched.json = json
    own(fetched)
  }
  return body
}

/**
 * Makes a kept answer hold memory of its own size. A small Buffer is a slice
 * of a shared 8 KiB pool, which it keeps alive whole: thousands of small
 * cached answers would hold thousands of pools, mostly garbage, that the
 * cache's budget would not see.
 */
export function own (fetched: Fetched): void {
  const { body, json } = fetched
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return
  const copy = Buffer.allocUnsafeSlow(body.length)
  body.copy(copy)
  const at = json.byteOffset - body.byteOffset
  fetched.body = copy
  fetched.json = copy.subarray(at, at + json.length)
}

/**
 * A call's result over its answer: a class, so that every result has one
 * shape and its accessors live on the prototype (an object literal with
 * getters, made per call, cost about 1 % of a BL lookup's CPU).
 */
class Result implements CallResult {
  readonly #fetched: Fetched
  #data: CallResult['data'] | undefined
  readonly count: number | undefined
  readonly upstreamStatus: number
  readonly cache?: CallResult['cache']

  constructor (fetched: Fetched, cache: CallResult['cache']) {
    this.#fetched = fetched
    this.count = fetched.count
    this.upstreamStatus = fetched.upstreamStatus
    if (cache !== undefined) this.cache = cache
  }

  get json (): Buffer {
    return this.#fetched.json
  }

  get data (): CallResult['data'] {
    this.#data ??= JSON.parse(this.#fetched.json.toString('utf8')) as CallResult['data']
    return this.#data
  }

  get etag (): string {
    this.#fetched.etag ??= entityTag(this.#fetched.json)
    return this.#fetched.etag
  }

  envelope ({ cached, stale }: { cached: boolean, stale: boolean }): Buffer {
    return envelopeOf(this.#fetched, cached, stale)
  }
}

export function resultOf (fetched: Fetched, cache?: CallResult['cache']): CallResult {
  return new Result(fetched, cache)
}

/**
 * What a cached answer costs beyond its envelope's bytes: the Fetched record, the two Buffer views
 * (envelope and JSON) and the ArrayBuffer, about 390 bytes of heap (and its entity tag, an
 * 18-character string, once asked for) (measured with --expose-gc over 100,000 entries, see
 * docs/operations.md#how-it-fails), and the ArrayBuffer's native backing store, which the heap
 * does not show (70 to 160 bytes in RSS). An entry holds one envelope: its first cache hit
 * replaces the fresh one (envelopeOf), which is one byte longer and is the one charged.
 */
export const ANSWER_OVERHEAD_BYTES = 512
