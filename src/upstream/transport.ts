/**
 * The transport: one undici pool per upstream address, one HTTP exchange
 * with the hub, its body read under the size limit and the body budget, and
 * every failure on the way mapped to the contract's error (failures.ts).
 * What the body means is the decoder's business (decode.ts).
 */
import { Pool, type Dispatcher } from 'undici'
import type { Config } from '../config/load.ts'
import { gatewayError } from '../errors.ts'
import { byteBudget } from './body-budget.ts'
import { bodyPool, type BodyPool } from './body-pool.ts'
import { retryAfterSeconds, statusFailure, transportFailure } from './failures.ts'
import { DRIFT } from '../mapping/drift.ts'
import { hubError } from './hub-message.ts'
import type { ResolvedOperation } from './resolve-operations.ts'

export type TransportConfig = Pick<Config,
  'UPSTREAM_MAX_CONNECTIONS' | 'UPSTREAM_CONNECT_TIMEOUT_MS' | 'UPSTREAM_HEADERS_TIMEOUT_MS' | 'UPSTREAM_BODY_TIMEOUT_MS' |
  'UPSTREAM_BODY_BUDGET_BYTES' | 'UPSTREAM_MAX_RESPONSE_BYTES'> &
  { UPSTREAM_HUB_URL: string, UPSTREAM_BASE_URL: string, UPSTREAM_API_KEY: string }

export interface TransportOptions {
  config: TransportConfig
  userAgent: string
  /** Bodies declared this large or larger wait for room in UPSTREAM_BODY_BUDGET_BYTES before they are read. */
  budgetFromBytes: number
}

/** What one exchange sends. */
export interface Exchange {
  path: string
  requestId: string
  /** The hub's authorization, for operations that send one. */
  authorization: string
  /** JSON body of a POST, in the hub's field names. */
  body?: unknown
  signal: AbortSignal
  /** Notes what the hub sent beyond its documented forms (DRIFT bits): an error's text in another member than `message`. */
  noteDrift?: (bit: number, details?: Record<string, unknown>) => void
}

/** Reads a 2xx answer's body, as it arrived in chunks, into what the caller wants of it; runs inside the body budget. */
export type ReadBody<T> = (chunks: readonly Buffer[], size: number, statusCode: number) => T | Promise<T>

export interface Transport {
  /** The path prefix of an upstream address ({hub_url} or {base_url}). */
  basePath (service: ResolvedOperation['service']): string
  /** One HTTP exchange: a 2xx answer's body goes to `read`; any other status, or trouble on the way, throws the contract's error. */
  exchange<T> (op: ResolvedOperation, exchange: Exchange, read: ReadBody<T>): Promise<T>
  /** Lets exchanges in flight finish, but never waits on a hung hub longer than a moment. */
  close (): Promise<void>
}

type Body = Dispatcher.ResponseData['body']

/** Bodies declared this long or longer are read into one pooled buffer (body-pool.ts); shorter ones usually come in one chunk. */
const POOLED_FROM_BYTES = 16 * 1024

/** Error bodies read for their message at most; a larger one loses its message. */
const ERROR_BODY_LIMIT = 64 * 1024

/** Stops reading a body we refuse; the connection is dropped rather than drained. */
function discard (body: Body): void {
  body.on('error', () => {})
  body.destroy()
}

/** A body as read: its chunks (one, the pooled buffer, when it was read into one), and that buffer to give back. */
interface ReadResult {
  chunks: Buffer[]
  size: number
  pooled: Buffer | undefined
}

/**
 * The body, refused past `limit` bytes. A body declared at least
 * POOLED_FROM_BYTES long is copied as it arrives into one buffer of the
 * pool (body-pool.ts); a shorter one (usually one chunk) is kept in the
 * chunks it came in. Read with events, not `for await`: an async iterator
 * costs a promise per chunk, on every request.
 */
function readBody (body: Body, declared: string | string[] | undefined, limit: number, pool: BodyPool | undefined): Promise<ReadResult> {
  const length = typeof declared === 'string' ? Number(declared) : Number.NaN
  if (length > limit) {
    discard(body)
    return Promise.reject(gatewayError('UPSTREAM_BAD_RESPONSE', { cause: new Error(`declared body of ${declared as string} bytes exceeds ${limit}`) }))
  }
  const pooled = pool !== undefined && length >= POOLED_FROM_BYTES ? pool.take(length) : undefined
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let failed = false
    const fail = (error: unknown): void => {
      if (failed) return
      failed = true
      if (pooled !== undefined) pool!.give(pooled)
      reject(error)
    }
    body.on('data', (chunk: Buffer) => {
      if (failed) return
      const end = size + chunk.length
      if (end > limit) {
        discard(body)
        fail(gatewayError('UPSTREAM_BAD_RESPONSE', { cause: new Error(`body exceeds ${limit} bytes`) }))
        return
      }
      if (pooled === undefined) {
        chunks.push(chunk)
      } else if (end > pooled.length) {
        // More than declared: undici refuses it too; until then, read on in chunks.
        discard(body)
        fail(transportFailure(new Error(`body longer than its content-length ${length}`), 'body'))
        return
      } else {
        chunk.copy(pooled, size)
      }
      size = end
    })
    body.once('error', (error) => fail(transportFailure(error, 'body')))
    body.once('end', () => {
      if (failed) return
      resolve(pooled === undefined ? { chunks, size, pooled } : { chunks: [pooled.subarray(0, size)], size, pooled })
    })
  })
}

export function createTransport ({ config, userAgent, budgetFromBytes }: TransportOptions): Transport {
  const pools = new Map<string, Pool>()
  const maxBytes = config.UPSTREAM_MAX_RESPONSE_BYTES
  const largeBodies = config.UPSTREAM_BODY_BUDGET_BYTES > 0 ? byteBudget(config.UPSTREAM_BODY_BUDGET_BYTES) : undefined
  // Spare buffers within the body budget (16 MiB by default); without a budget, none are kept.
  const buffers = bodyPool(config.UPSTREAM_BODY_BUDGET_BYTES)

  // One pool per upstream address (origin): hub and base share one when they are the same host.
  function upstreamFor (address: string): { pool: Pool, basePath: string } {
    const url = new URL(address)
    let pool = pools.get(url.origin)
    if (pool === undefined) {
      pool = new Pool(url.origin, {
        connections: config.UPSTREAM_MAX_CONNECTIONS,
        connect: { timeout: config.UPSTREAM_CONNECT_TIMEOUT_MS },
        headersTimeout: config.UPSTREAM_HEADERS_TIMEOUT_MS,
        bodyTimeout: config.UPSTREAM_BODY_TIMEOUT_MS,
        keepAliveTimeout: 10_000
      })
      pools.set(url.origin, pool)
    }
    return { pool, basePath: url.pathname.replace(/\/+$/, '') }
  }
  const upstreams = { hub: upstreamFor(config.UPSTREAM_HUB_URL), base: upstreamFor(config.UPSTREAM_BASE_URL) }

  /** The operation's credentials under the header names of the profile in force: the key under each of its names, the token under its own. */
  function headersFor (op: ResolvedOperation, requestId: string, hasBody: boolean, authorization: string): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': userAgent, 'x-request-id': requestId }
    if (hasBody) headers['content-type'] = 'application/json'
    if (op.sendsApiKey) for (const name of op.apiKeyHeaders) headers[name] = config.UPSTREAM_API_KEY
    if (op.sendsToken) headers[op.tokenHeader] = authorization
    return headers
  }

  return {
    basePath: (service) => upstreams[service].basePath,

    async exchange (op, { path, requestId, authorization, body: payload, signal, noteDrift }, read) {
      const hasBody = payload !== undefined
      let response: Dispatcher.ResponseData
      try {
        response = await upstreams[op.service].pool.request({
          method: op.method,
          path,
          headers: headersFor(op, requestId, hasBody, authorization),
          body: hasBody ? JSON.stringify(payload) : null,
          signal,
          ...(op.headersTimeout === undefined ? {} : { headersTimeout: op.headersTimeout }),
          ...(op.bodyTimeout === undefined ? {} : { bodyTimeout: op.bodyTimeout })
        })
      } catch (error) {
        throw transportFailure(error, 'headers')
      }
      const { statusCode, headers, body } = response
      if (statusCode < 200 || statusCode >= 300) {
        let text = ''
        if (statusCode >= 400 && statusCode < 500) {
          try {
            const { chunks, size } = await readBody(body, headers['content-length'], ERROR_BODY_LIMIT, undefined)
            text = Buffer.concat(chunks, size).toString('utf8')
          } catch {
            // The status already decides; an unreadable error body only loses its message.
          }
        } else {
          // Only a 4xx's message is passed on (hub-message.ts): read the rest past, keeping the connection.
          await body.dump({ limit: ERROR_BODY_LIMIT }).catch(() => {})
        }
        const found = hubError(statusCode, text, [config.UPSTREAM_API_KEY, authorization], op.errorFields)
        if (found !== undefined && found.field !== 'message') noteDrift?.(DRIFT.errorField, { field: found.field })
        throw statusFailure(statusCode, found?.text, retryAfterSeconds(headers['retry-after']))
      }
      // A large body waits for room in the budget before it is read (backpressure to the hub, not memory).
      const declared = Number(headers['content-length'])
      let release: (() => void) | undefined
      let pooled: Buffer | undefined
      try {
        if (largeBodies !== undefined && declared >= budgetFromBytes && declared <= maxBytes) {
          try {
            release = await largeBodies.acquire(declared, signal)
          } catch (error) {
            discard(body)
            throw error
          }
        }
        const result = await readBody(body, headers['content-length'], maxBytes, buffers)
        pooled = result.pooled
        return await read(result.chunks, result.size, statusCode)
      } catch (error) {
        // The hub answered 2xx: it acted, whatever became of its answer here.
        if (error !== null && typeof error === 'object') Object.assign(error, { hubMayHaveActed: true })
        throw error
      } finally {
        // The decoder has copied what it keeps.
        if (pooled !== undefined) buffers.give(pooled)
        release?.()
      }
    },

    async close () {
      await Promise.all([...pools.values()].map(async pool => {
        const timer = setTimeout(() => { pool.destroy().catch(() => {}) }, 1000)
        try {
          await pool.close()
        } catch {
          // destroyed while closing
        } finally {
          clearTimeout(timer)
        }
      }))
    }
  }
}
