/**
 * The transport: one undici pool per upstream address, one HTTP exchange
 * with the hub, its body read under the size limit and the body budget, and
 * every failure on the way mapped to the contract's error (failures.ts).
 * What the body means is the decoder's business (decode.ts).
 */
import type { FastifyBaseLogger } from 'fastify'
import { Pool, type Dispatcher } from 'undici'
import type { Config } from '../config/load.ts'
import { gatewayError } from '../errors.ts'
import { byteBudget } from './body-budget.ts'
import { bodyPool, type BodyPool } from './body-pool.ts'
import type { Policy } from './call-path.ts'
import type { Deadline } from './deadline.ts'
import type { DriftReporter } from './drift.ts'
import { afterHubActed, retryAfterSeconds, statusFailure, transportFailure } from './failures.ts'
import { DRIFT } from '../mapping/drift.ts'
import { hubError } from './hub-message.ts'
import type { ProfileInForce } from '../profile/resolve.ts'
import type { ResolvedOperation } from './resolve-operations.ts'

export type TransportConfig = Pick<Config,
  'UPSTREAM_BODY_BUDGET_BYTES' | 'UPSTREAM_MAX_RESPONSE_BYTES'> &
  { UPSTREAM_HUB_URL: string, UPSTREAM_BASE_URL: string, UPSTREAM_API_KEY: string }

export interface TransportOptions {
  config: TransportConfig
  /** The hub profile's connections and default timeouts: each address's pool. */
  profile: Pick<ProfileInForce, 'connections' | 'timeouts'>
  userAgent: string
  /** Bodies declared this large or larger wait for room in UPSTREAM_BODY_BUDGET_BYTES before they are read. */
  budgetFromBytes: number
  /** Where bodies of POOLED_FROM_BYTES or more are read into (default: spare buffers kept within the body budget; without a budget, none kept). */
  buffers?: BodyPool
  /**
   * Where what the hub sent beyond its documented forms is counted and
   * logged: an error's text in another member than `message`.
   */
  drift?: DriftReporter | undefined
}

/** What one exchange sends. */
export interface Exchange {
  path: string
  requestId: string
  /** The hub's authorization, for operations that send one. */
  authorization: string
  /** JSON body of a POST, in the hub's field names. */
  body?: unknown
  /** The call's deadline: the exchange is abandoned (UPSTREAM_TIMEOUT) when it passes. */
  deadline: Deadline
  /** Where the drift reporter (TransportOptions.drift) logs what the answer needed. */
  log?: Pick<FastifyBaseLogger, 'warn'>
}

/**
 * Reads a 2xx answer's body, as it arrived in chunks, into what the caller
 * wants of it, given the exchange it answers; runs inside the body budget.
 */
export type ReadBody<T, E extends Exchange = Exchange> =
  (chunks: readonly Buffer[], size: number, statusCode: number, exchange: E) => T | Promise<T>

export interface Transport {
  /** The path prefix of an upstream address ({hub_url} or {base_url}). */
  basePath (service: ResolvedOperation['service']): string
  /**
   * One HTTP exchange: a 2xx answer's body goes to `read` (so does a 404 of a list the profile
   * says the hub answers so when it has nothing); any other status, or trouble on the way,
   * throws the contract's error.
   */
  exchange<T, E extends Exchange = Exchange> (
    op: ResolvedOperation, exchange: E, read: ReadBody<T, E>
  ): Promise<T>
  /** Lets exchanges in flight finish, but never waits on a hung hub longer than a moment. */
  close (): Promise<void>
}

/** Bodies declared this long or longer are read into one pooled buffer (body-pool.ts); shorter ones usually come in one chunk. */
const POOLED_FROM_BYTES = 16 * 1024

/** Error bodies read for their message at most; a larger one loses its message. */
const ERROR_BODY_LIMIT = 64 * 1024

/** What one exchange brought back: the status, the headers and the body as read. */
interface Answer {
  statusCode: number
  headers: Record<string, string | string[] | undefined>
  /** The body's chunks: one, the pooled buffer, when it was read into one; none when it was not kept (a 5xx, or an error body past its limit). */
  chunks: Buffer[]
  size: number
  /** The pool's buffer to give back once the answer is decoded. */
  pooled: Buffer | undefined
  /** The body budget's share to give back. */
  release: (() => void) | undefined
}

/** Thrown by the exchange's own timer: transportFailure reads a TimeoutError as UPSTREAM_TIMEOUT. */
function deadlinePassed (): Error {
  return new DOMException('The hub call\'s deadline passed', 'TimeoutError')
}

export function createTransport (options: TransportOptions): Transport {
  const { config, profile, userAgent, budgetFromBytes, drift } = options
  const buffers = options.buffers ?? bodyPool(config.UPSTREAM_BODY_BUDGET_BYTES)
  const pools = new Map<string, Pool>()
  const maxBytes = config.UPSTREAM_MAX_RESPONSE_BYTES
  const largeBodies = config.UPSTREAM_BODY_BUDGET_BYTES > 0 ? byteBudget(config.UPSTREAM_BODY_BUDGET_BYTES) : undefined

  // One pool per upstream address (origin): hub and base share one when they are the same host.
  function upstreamFor (address: string): { pool: Pool, basePath: string } {
    const url = new URL(address)
    let pool = pools.get(url.origin)
    if (pool === undefined) {
      pool = new Pool(url.origin, {
        connections: profile.connections.max,
        connect: { timeout: profile.connections.connectTimeoutMs },
        headersTimeout: profile.timeouts.headersMs,
        bodyTimeout: profile.timeouts.bodyMs,
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

  /**
   * One exchange through undici's `dispatch`, with a handler of ours that
   * keeps the body's chunks (or copies them into a pooled buffer) as they
   * come: no Readable body and no signal listener per answer, which
   * undici's `request` makes (measured in bench/hub-call-micro.ts: 36 against
   * 52 µs an exchange, client and server together). The deadline is a timer
   * to `deadline.at`. Resolves once the whole body is read; rejects with the
   * contract's error.
   */
  function send (op: ResolvedOperation, options: Dispatcher.DispatchOptions, deadline: Deadline): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined
      let settled = false
      let statusCode = 0
      let headers: Answer['headers'] = {}
      const chunks: Buffer[] = []
      let size = 0
      // Until the status is known, nothing is read; then a 2xx body up to the size limit, an error body up to its own.
      let limit = 0
      let keep = false
      let pooled: Buffer | undefined
      let release: (() => void) | undefined

      const stop = (reason: Error): void => {
        if (controller !== undefined && !controller.aborted) controller.abort(reason)
      }
      const fail = (error: unknown): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        if (pooled !== undefined) buffers.give(pooled)
        release?.()
        // The hub answered 2xx: it acted, whatever became of its answer here.
        reject(statusCode >= 200 && statusCode < 300 ? afterHubActed(error) : error)
      }
      const succeed = (): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ statusCode, headers, chunks: pooled === undefined ? chunks : [pooled.subarray(0, size)], size, pooled, release })
      }
      const timer = setTimeout(() => {
        const reason = deadlinePassed()
        stop(reason)
        fail(transportFailure(reason, statusCode === 0 ? 'headers' : 'body'))
      }, Math.max(0, deadline.at - Date.now()))

      upstreams[op.service].pool.dispatch(options, {
        onRequestStart (c) {
          controller = c
          // Given up on while it waited for a connection: it never starts.
          if (settled) c.abort(deadlinePassed())
        },
        onResponseStart (c, status, responseHeaders) {
          if (settled) return
          statusCode = status
          headers = responseHeaders
          const declared = typeof responseHeaders['content-length'] === 'string' ? Number(responseHeaders['content-length']) : Number.NaN
          if (status < 200 || status >= 300) {
            // Only a 4xx's message is passed on (hub-message.ts); a 5xx's body is read past, keeping the connection.
            limit = ERROR_BODY_LIMIT
            keep = status >= 400 && status < 500
            return
          }
          limit = maxBytes
          keep = true
          if (declared > maxBytes) {
            const cause = new Error(`declared body of ${declared} bytes exceeds ${maxBytes}`)
            const error = gatewayError('UPSTREAM_BAD_RESPONSE', { hubMayHaveActed: true, cause })
            stop(error)
            fail(error)
            return
          }
          // A large body waits for room in the budget before it is read (backpressure to the hub, not memory),
          // and takes its buffer only then: a body waiting for room holds none.
          if (largeBodies !== undefined && declared >= budgetFromBytes) {
            c.pause()
            largeBodies.acquire(declared, deadline.signal).then((give) => {
              if (settled) {
                give()
                return
              }
              release = give
              pooled = buffers.take(declared)
              c.resume()
            }, (error: unknown) => {
              stop(error instanceof Error ? error : new Error('no room in the body budget'))
              fail(error)
            })
          } else if (declared >= POOLED_FROM_BYTES) {
            pooled = buffers.take(declared)
          }
        },
        onResponseData (_c, chunk) {
          if (settled) return
          const end = size + chunk.length
          if (end > limit) {
            if (statusCode >= 200 && statusCode < 300) {
              const cause = new Error(`body exceeds ${limit} bytes`)
              const error = gatewayError('UPSTREAM_BAD_RESPONSE', { hubMayHaveActed: true, cause })
              stop(error)
              fail(error)
              return
            }
            // An error body past its limit: the status decides, the message is lost, the connection dropped.
            chunks.length = 0
            size = 0
            stop(new Error(`error body exceeds ${limit} bytes`))
            succeed()
            return
          }
          if (pooled !== undefined) {
            if (end > pooled.length) {
              // More than declared: undici refuses it too.
              const error = transportFailure(new Error(`body longer than its content-length ${pooled.length}`), 'body')
              stop(error)
              fail(error)
              return
            }
            chunk.copy(pooled, size)
          } else if (keep) {
            chunks.push(chunk)
          }
          size = end
        },
        onResponseEnd () {
          succeed()
        },
        onResponseError (_c, error) {
          fail(transportFailure(error, statusCode === 0 ? 'headers' : 'body'))
        }
      })
    })
  }

  return {
    basePath: (service) => upstreams[service].basePath,

    async exchange (op, exchange, read) {
      const { path, requestId, authorization, body: payload, deadline, log } = exchange
      const hasBody = payload !== undefined
      const answer = await send(op, {
        method: op.method,
        path,
        headers: headersFor(op, requestId, hasBody, authorization),
        body: hasBody ? JSON.stringify(payload) : null,
        ...(op.headersTimeout === undefined ? {} : { headersTimeout: op.headersTimeout }),
        ...(op.bodyTimeout === undefined ? {} : { bodyTimeout: op.bodyTimeout })
      }, deadline)
      const { statusCode, headers } = answer
      // A 404 that says a list has nothing is an answer (decode.ts reads it as an empty list).
      const answered = (statusCode >= 200 && statusCode < 300) ||
        (statusCode === 404 && op.emptyWhenNotFound)
      if (!answered) {
        const text = answer.chunks.length === 0 ? '' : Buffer.concat(answer.chunks, answer.size).toString('utf8')
        const found = hubError(statusCode, text, [config.UPSTREAM_API_KEY, authorization], op.errorFields)
        if (found !== undefined && found.field !== 'message' && log !== undefined) {
          drift?.report(op.id, DRIFT.errorField, log, { field: found.field })
        }
        throw statusFailure(statusCode, found?.text, retryAfterSeconds(headers['retry-after']))
      }
      try {
        return await read(answer.chunks, answer.size, statusCode, exchange)
      } catch (error) {
        throw afterHubActed(error)
      } finally {
        // The decoder has copied what it keeps.
        if (answer.pooled !== undefined) buffers.give(answer.pooled)
        answer.release?.()
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

/**
 * The exchange step, the call path's last: the HTTP exchange, its body read as
 * decode said. A write's beforeSend (its key marked sending) is awaited here,
 * once, so that no other step lies between the mark and the request leaving;
 * a lookup has none and pays one test for it.
 */
export function exchangePolicy (transport: Transport): Policy {
  return () => (ctx) => {
    const { beforeSend } = ctx
    if (beforeSend === undefined) return transport.exchange(ctx.op, ctx, ctx.read)
    ctx.beforeSend = undefined
    return beforeSend().then(() => {
      // The mark took what was left of the deadline: nothing is sent, so the key is freed.
      if (Date.now() >= ctx.deadline.at) throw gatewayError('UPSTREAM_TIMEOUT')
      return transport.exchange(ctx.op, ctx, ctx.read)
    })
  }
}
