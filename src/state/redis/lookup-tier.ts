import { createHash } from 'node:crypto'
import type { SharedLookupEntry, SharedLookupTier } from '../types.ts'
import { redisReason, type RedisConnection } from './connection.ts'
import { parseVersioned } from './versioned.ts'

export interface RedisLookupTierOptions {
  connection: RedisConnection
  /** Larger answers are not shared (each replica's memory tier may still keep them). */
  maxEntryBytes: number
  /** The clock, in ms (tests move it). */
  now?: () => number
}

/** Format of the value's header; a reader skips any other. */
const VERSION = 2
const NEWLINE = 0x0a

interface Header {
  v: number
  count: number | null
  upstreamStatus: number
  fetchedAt: number
  expiresAt: number
  staleUntil: number
}

/**
 * The Redis key of a lookup: hashed, so that keys stay short and hold no tax ids or document
 * numbers.
 */
export function lookupKey (key: string): string {
  return `lookup:${createHash('sha256').update(key).digest('base64url')}`
}

/**
 * Value: one line of JSON header (version, count, status, times), a newline,
 * then our JSON of `data` as is. The body is not wrapped in JSON again, so an
 * answer of a megabyte is neither escaped nor parsed on its way through.
 */
export function encodeLookupEntry (entry: SharedLookupEntry): Buffer {
  const header: Header = {
    v: VERSION,
    count: entry.count ?? null,
    upstreamStatus: entry.upstreamStatus,
    fetchedAt: entry.fetchedAt,
    expiresAt: entry.expiresAt,
    staleUntil: entry.staleUntil
  }
  return Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), entry.json])
}

/** The entry, or undefined for a value of another version or shape. */
export function decodeLookupEntry (value: Buffer): SharedLookupEntry | undefined {
  const end = value.indexOf(NEWLINE)
  if (end < 0) return undefined
  const header = parseVersioned(value.subarray(0, end).toString(), VERSION)
  if (header === undefined) return undefined
  const { count, upstreamStatus, fetchedAt, expiresAt, staleUntil } = header
  if (
    typeof upstreamStatus !== 'number' ||
    typeof fetchedAt !== 'number' ||
    typeof expiresAt !== 'number' ||
    typeof staleUntil !== 'number'
  ) { return undefined }
  if (count !== null && typeof count !== 'number') return undefined
  return {
    json: value.subarray(end + 1),
    count: count ?? undefined,
    upstreamStatus,
    fetchedAt,
    expiresAt,
    staleUntil
  }
}

/**
 * The shared tier of the lookup cache. It only ever saves hub calls, so any
 * Redis trouble is a miss: Redis known down costs nothing, a slow one at
 * most the command timeout.
 */
export function createRedisLookupTier ({
  connection,
  maxEntryBytes,
  now = Date.now
}: RedisLookupTierOptions): SharedLookupTier {
  const { client, log } = connection
  return {
    async get (key) {
      if (connection.health() === 'down') return undefined
      let value: Buffer | null
      try {
        value = await client.getBuffer(lookupKey(key))
      } catch (error) {
        log.debug({ reason: redisReason(error) }, 'shared lookup cache: read failed')
        return undefined
      }
      if (value === null) return undefined
      const entry = decodeLookupEntry(value)
      // Redis expires the key at staleUntil; this also covers clocks a few ms apart.
      if (entry === undefined || now() >= entry.staleUntil) return undefined
      return entry
    },
    async set (key, entry) {
      const ttlMs = entry.staleUntil - now()
      if (ttlMs <= 0 || entry.json.length > maxEntryBytes || connection.health() !== 'up') return
      try {
        await client.set(lookupKey(key), encodeLookupEntry(entry), 'PX', Math.ceil(ttlMs))
      } catch (error) {
        connection.noteError(error)
        log.debug({ reason: redisReason(error) }, 'shared lookup cache: write failed')
      }
    }
  }
}
