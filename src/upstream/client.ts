import { setTimeout as sleep } from 'node:timers/promises'
import { Pool, type Dispatcher } from 'undici'
import type { FastifyBaseLogger } from 'fastify'
import { createLookupCache } from '../cache/lookup-cache.ts'
import type { Config } from '../config/load.ts'
import type { Caller, Credentials } from '../credentials/index.ts'
import { gatewayError } from '../errors.ts'
import { ShapeError } from '../mapping/shape-error.ts'
import type { Transcoded } from '../mapping/transcode/index.ts'
import { envelopeAround, FRESH_FRAME } from '../schemas/envelope.ts'
import { extract } from './reference-path.ts'
import { hubMessage } from './hub-message.ts'
import { oneTurnEach } from './one-turn-each.ts'
import { byteBudget } from './body-budget.ts'
import { outcomeOf, retryAfterSeconds, statusFailure, transportFailure, type Outcome } from './failures.ts'
import type { OperationId } from './operations.ts'
import { createBreaker, type Breaker, type BreakerState } from './policies/breaker.ts'
import { addressTemplate, buildPath, resolveOperations, type OperationMap, type ResolvedOperation } from './resolve-operations.ts'
import { isRetryable, retryDelay, type RetryPolicy } from './policies/retry.ts'
import { inAttemptSpan, inCallSpan } from './spans.ts'
import { createTranscodePool, threadSetup, transcodeThreads } from './transcode-pool.ts'

/**
 * What the hub client reads of the caller's request (a FastifyRequest is
 * one): its id (sent on as `x-request-id`) and logger; the hub's status is
 * noted on it; forward mode reads its token; its client (or, without
 * authentication, its address) is who the bound on hub calls in flight counts.
 */
export interface HubCaller extends Caller {
  readonly id: string
  readonly log: FastifyBaseLogger
  upstreamStatus?: number
  readonly client?: { name: string } | null
  readonly ip?: string
}

/** One call a route asks of the hub. */
export interface CallInput {
  operation: OperationId
  /** Validated gateway parameter values, by gateway name. */
  params?: Readonly<Record<string, string>>
  /** JSON body for POST operations, already in the hub's field names. */
  body?: unknown
  /** The caller sent `cache-control: no-cache`: ask the hub afresh. */
  fresh?: boolean
}

/** A call with its caller, as the layers below `call` pass it on. */
interface Call extends CallInput {
  request: HubCaller
  requestId: string
  log: FastifyBaseLogger
}

export interface CallResult {
  /**
   * Our JSON of the answer, UTF-8: the `data` member, encoded once per hub
   * answer and shared by every response made from it (coalesced and cached
   * ones): large SP2 lists are not serialized again for each caller.
   */
  json: Buffer
  /** Items of a list operation; undefined for a record. */
  count: number | undefined
  /** The same answer as objects, parsed from `json` on demand (for routes that merge or reshape it). */
  readonly data: Record<string, unknown> | Array<Record<string, unknown>>
  upstreamStatus: number
  /** GET lookups: how the answer relates to the cache. */
  cache?: { cached: boolean, stale: boolean, ageSeconds: number, ttlSeconds: number }
  /**
   * The whole lookup response, `{"data":...,"meta":{...}}`, as bytes. The
   * answer is copied into it once per hub call, and once more at its first
   * cache hit; every other response with the same meta sends the same bytes.
   */
  envelope (meta: { cached: boolean, stale: boolean }): Buffer
}

interface Fetched {
  /** Our JSON: a view into `body`. */
  json: Buffer
  count: number | undefined
  upstreamStatus: number
  /** The envelope of this answer for `meta.cached` = `cached` (not stale): first the fresh one, from the first cache hit on the cached one. */
  body: Buffer
  cached: boolean
}

function fetchedOf ({ json, count, framed }: Transcoded, upstreamStatus: number): Fetched {
  return { json, count, upstreamStatus, body: framed, cached: false }
}

function envelopeOf (fetched: Fetched, cached: boolean, stale: boolean): Buffer {
  if (!stale && cached === fetched.cached) return fetched.body
  const { body, json } = envelopeAround(fetched.json, { count: fetched.count, cached, stale })
  if (cached && !stale) {
    // Every later hit sends this one: keep it instead of the fresh one (the answer stays in memory once).
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
function own (fetched: Fetched): void {
  const { body, json } = fetched
  if (body.byteOffset === 0 && body.buffer.byteLength === body.length) return
  const copy = Buffer.allocUnsafeSlow(body.length)
  body.copy(copy)
  const at = json.byteOffset - body.byteOffset
  fetched.body = copy
  fetched.json = copy.subarray(at, at + json.length)
}

function resultOf (fetched: Fetched, cache?: CallResult['cache']): CallResult {
  let data: CallResult['data'] | undefined
  return {
    get json () {
      return fetched.json
    },
    count: fetched.count,
    get data () {
      data ??= JSON.parse(fetched.json.toString('utf8')) as CallResult['data']
      return data
    },
    upstreamStatus: fetched.upstreamStatus,
    ...(cache === undefined ? {} : { cache }),
    envelope: ({ cached, stale }) => envelopeOf(fetched, cached, stale)
  }
}

/**
 * What a cached answer costs beyond its envelope's bytes: the Fetched record,
 * the two Buffer views (envelope and JSON) and the ArrayBuffer, about 390
 * bytes of heap (measured with --expose-gc over 100,000 entries, see
 * docs/resilience.md), and the ArrayBuffer's native backing store, which
 * the heap does not show (70 to 160 bytes in RSS). An entry holds one
 * envelope: its first cache hit replaces the fresh one (envelopeOf), which is
 * one byte longer and is the one charged.
 */
const ANSWER_OVERHEAD_BYTES = 512

/**
 * Failures the cache remembers for a moment (CACHE_FAILURE_SECONDS): the hub
 * unavailable, too slow or unreadable, as a hub call found it; not an open
 * circuit (no hub call was made, and its retry-after changes), nor the hub
 * refusing the request (4xx).
 */
function isHubTrouble (error: unknown): boolean {
  const { code, cause } = error as { code?: string, cause?: { code?: string } }
  if (cause?.code === 'EOPENBREAKER') return false
  return code === 'UPSTREAM_UNAVAILABLE' || code === 'UPSTREAM_TIMEOUT' || code === 'UPSTREAM_BAD_RESPONSE'
}

/** One circuit: an operation of one upstream (`hub` is {hub_url}, `base` is {base_url}). */
export interface Circuit {
  upstream: 'hub' | 'base'
  operation: OperationId
  state: BreakerState
}

export interface HubClient {
  operations: OperationMap
  call (caller: HubCaller, input: CallInput): Promise<CallResult>
  /** The state of every circuit: one per upstream and operation (a gauge can read them). */
  circuits (): Circuit[]
  /** What the lookup cache holds: entries, the bytes charged for them, failures remembered. */
  cacheUsage (): { entries: number, bytes: number, failures: number }
  close (): Promise<void>
}

export interface HubClientOptions {
  config: Config & { UPSTREAM_HUB_URL: string, UPSTREAM_BASE_URL: string, UPSTREAM_API_KEY: string }
  credentials: Credentials
  userAgent: string
  /** Called once per call with its outcome and duration, for metrics. */
  observe?: (operation: OperationId, outcome: Outcome, seconds: number) => void
  /** Called when a 2xx answer is read by the reference path (the transcoder gave up). */
  onSlowPath?: (operation: OperationId) => void
}

interface Upstream { pool: Pool, basePath: string }

type Body = Dispatcher.ResponseData['body']
interface Chunks { chunks: Buffer[], size: number }

/** Bodies up to this size are joined in one reused buffer (see contiguous); larger ones get their own. */
const SCRATCH_KEEP_BYTES = 4 * 1024 * 1024

/** Error bodies read for their message at most; a larger one loses its message. */
const ERROR_BODY_LIMIT = 64 * 1024

/** Answers from this size on are transcoded on a thread (transcode-pool.ts), or else read one per turn of the event loop (see oneTurnEach). */
const LARGE_ANSWER_BYTES = 256 * 1024

export function createHubClient ({ config, credentials, userAgent, observe, onSlowPath }: HubClientOptions): HubClient {
  const operations = resolveOperations(config)
  const pools = new Map<string, Pool>()
  // Hub calls in flight per caller (UPSTREAM_MAX_CALLS_PER_CLIENT).
  const inFlight = new Map<string, number>()
  const cache = createLookupCache<Fetched>({
    maxBytes: config.CACHE_MAX_BYTES,
    maxEntries: config.CACHE_MAX_ENTRIES,
    failureMs: config.CACHE_FAILURE_SECONDS * 1000,
    remember: isHubTrouble
  })
  const policy: RetryPolicy = { retries: config.UPSTREAM_RETRIES, baseMs: config.UPSTREAM_RETRY_BASE_MS, maxMs: config.UPSTREAM_RETRY_MAX_MS }
  const upstreams = {
    hub: upstreamFor(config.UPSTREAM_HUB_URL),
    base: upstreamFor(config.UPSTREAM_BASE_URL)
  }
  // One circuit per upstream address and operation: a lookup the hub keeps failing
  // opens its own circuit, not the writes' (nor the other lookups').
  const breakers = new Map<OperationId, Breaker>([...operations.values()].map(op => [op.id, createBreaker(`${op.service} ${op.id}`, {
    errorThresholdPercentage: config.BREAKER_ERROR_PERCENTAGE,
    volumeThreshold: config.BREAKER_VOLUME_THRESHOLD,
    rollingCountTimeout: config.BREAKER_WINDOW_MS,
    resetTimeout: config.BREAKER_RESET_MS
  })]))
  // Each operation's address without its values, for the spans of its calls.
  const templates = new Map([...operations.values()].map(op => [op.id, addressTemplate(op, config.UPSTREAM_PARAM_PLACEMENT, upstreams[op.service].basePath)]))
  const largeAnswers = oneTurnEach()
  const largeBodies = config.UPSTREAM_BODY_BUDGET_BYTES > 0 ? byteBudget(config.UPSTREAM_BODY_BUDGET_BYTES) : undefined
  const keyHeader = config.UPSTREAM_API_KEY_HEADER.toLowerCase()
  const maxBytes = config.UPSTREAM_MAX_RESPONSE_BYTES
  let scratch: Buffer = Buffer.allocUnsafeSlow(64 * 1024)
  const threads = transcodeThreads(config.TRANSCODE_THREADS)
  const transcoding = threads === 0
    ? undefined
    : createTranscodePool(threads, threadSetup(operations, config.UPSTREAM_TIMEZONE))

  // One pool per upstream address (origin): hub and base share one when they are the same host.
  function upstreamFor (address: string): Upstream {
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

  function headersFor (op: ResolvedOperation, requestId: string, hasBody: boolean, authorization: string): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': userAgent, 'x-request-id': requestId }
    if (hasBody) headers['content-type'] = 'application/json'
    for (const header of op.headers) {
      if (header === 'apiKey') headers[keyHeader] = config.UPSTREAM_API_KEY
      else headers.authorization = authorization
    }
    return headers
  }

  /** Stops reading a body we refuse; the connection is dropped rather than drained. */
  function discard (body: Body): void {
    body.on('error', () => {})
    body.destroy()
  }

  /** The body as it arrived, in chunks (see contiguous). */
  async function readChunks (body: Body, declared: string | string[] | undefined, limit = maxBytes): Promise<Chunks> {
    if (typeof declared === 'string' && Number(declared) > limit) {
      discard(body)
      throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: new Error(`declared body of ${declared} bytes exceeds ${limit}`) })
    }
    const chunks: Buffer[] = []
    let size = 0
    try {
      for await (const chunk of body) {
        size += chunk.length
        if (size > limit) {
          discard(body)
          throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: new Error(`body exceeds ${limit} bytes`) })
        }
        chunks.push(chunk)
      }
    } catch (error) {
      if ((error as { code?: string }).code === 'UPSTREAM_BAD_RESPONSE') throw error
      throw transportFailure(error, 'body')
    }
    return { chunks, size }
  }

  /** One HTTP exchange with the hub. */
  async function send (op: ResolvedOperation, input: Call, path: string, authorization: string, signal: AbortSignal): Promise<Fetched> {
    const { pool } = upstreams[op.service]
    const hasBody = input.body !== undefined
    let response: Awaited<ReturnType<Pool['request']>>
    try {
      response = await pool.request({
        method: op.method,
        path,
        headers: headersFor(op, input.requestId, hasBody, authorization),
        body: hasBody ? JSON.stringify(input.body) : null,
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
          const { chunks, size } = await readChunks(body, headers['content-length'], ERROR_BODY_LIMIT)
          text = Buffer.concat(chunks, size).toString('utf8')
        } catch {
          // The status already decides; an unreadable error body only loses its message.
        }
      } else {
        // Only a 4xx's message is passed on (hub-message.ts): read the rest past, keeping the connection.
        await body.dump({ limit: ERROR_BODY_LIMIT }).catch(() => {})
      }
      throw statusFailure(statusCode, hubMessage(statusCode, text, [config.UPSTREAM_API_KEY, authorization]), retryAfterSeconds(headers['retry-after']))
    }
    // A large body waits for room in the budget before it is read (backpressure to the hub, not memory).
    const declared = Number(headers['content-length'])
    let release: (() => void) | undefined
    if (largeBodies !== undefined && declared >= LARGE_ANSWER_BYTES && declared <= maxBytes) {
      try {
        release = await largeBodies.acquire(declared, signal)
      } catch (error) {
        discard(body)
        throw error
      }
    }
    try {
      const chunks = await readChunks(body, headers['content-length'])
      if (chunks.size < LARGE_ANSWER_BYTES) return decode(op, contiguous(chunks), statusCode, input.log)
      const fast = transcoding === undefined ? undefined : await onThread(op, chunks, signal, input.log)
      if (fast !== undefined && !('gaveUp' in fast)) return fetchedOf(fast, statusCode)
      return await largeAnswers.run(() => {
        // Waited past the deadline for its turn: not worth the work any more.
        if (signal.aborted) throw gatewayError('UPSTREAM_TIMEOUT')
        // Given up on by a thread's transcoder: the reference path reads the body it sent back.
        return fast === undefined ? decode(op, contiguous(chunks), statusCode, input.log) : decode(op, fast.gaveUp, statusCode, input.log, true)
      })
    } finally {
      release?.()
    }
  }

  /**
   * The body in one buffer, valid until the next call: several chunks are
   * copied into a buffer reused by every answer (decode reads it at once and
   * keeps nothing of it), rather than a new one per answer.
   */
  function contiguous ({ chunks, size }: Chunks): Buffer {
    if (chunks.length === 1) return chunks[0] as Buffer
    if (size > SCRATCH_KEEP_BYTES) return Buffer.concat(chunks, size)
    if (scratch.length < size) scratch = Buffer.allocUnsafeSlow(Math.max(size, scratch.length * 2))
    let at = 0
    for (const chunk of chunks) at += chunk.copy(scratch, at)
    return scratch.subarray(0, size)
  }

  /**
   * The answer transcoded on a thread, framed in the fresh envelope, or the
   * body where the transcoder gave up; undefined where the thread failed, so
   * that the main thread does the whole work instead.
   */
  async function onThread (op: ResolvedOperation, { chunks, size }: Chunks, signal: AbortSignal, log: FastifyBaseLogger): Promise<Transcoded | { gaveUp: Buffer } | undefined> {
    try {
      return await transcoding!.run(op.id, chunks, size, signal)
    } catch (error) {
      // Waited past the deadline for a free thread.
      if (signal.aborted) throw gatewayError('UPSTREAM_TIMEOUT')
      log.error({ operation: op.id, err: error }, 'transcoding thread failed: reading the answer on the main thread')
      return undefined
    }
  }

  /** Our JSON of a 2xx answer's bytes, framed in the fresh envelope. */
  function decode (op: ResolvedOperation, bytes: Buffer, statusCode: number, log: FastifyBaseLogger, fastTried = false): Fetched {
    // The fast path; it gives up on anything but a well-formed answer of the documented shape.
    const fast = fastTried ? undefined : op.transcode(bytes, FRESH_FRAME)
    if (fast !== undefined) return fetchedOf(fast, statusCode)
    // The reference path: parse, normalize, and report exactly what is wrong.
    onSlowPath?.(op.id)
    const text = bytes.toString('utf8')
    let parsed: unknown
    if (text.trim() === '' && op.method === 'POST') {
      parsed = {}
    } else {
      try {
        parsed = JSON.parse(text)
      } catch (error) {
        throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: error })
      }
    }
    let data: CallResult['data']
    try {
      data = extract(op, parsed, log)
    } catch (error) {
      if (error instanceof ShapeError) throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: error })
      throw error
    }
    const count = Array.isArray(data) ? data.length : undefined
    const { body, json } = envelopeAround(Buffer.from(JSON.stringify(data)), { count, cached: false })
    return { json, count, upstreamStatus: statusCode, body, cached: false }
  }

  /**
   * One call through its circuit breaker: the breaker judges the whole call,
   * so a call retried three times counts once. GET lookups retry by the
   * policy, within the deadline.
   */
  async function attempt (op: ResolvedOperation, input: Call, path: string, authorization: string, deadline: number, signal: AbortSignal): Promise<Fetched> {
    return breakers.get(op.id)!.run(() => retried(op, input, path, authorization, deadline, signal))
  }

  async function retried (op: ResolvedOperation, input: Call, path: string, authorization: string, deadline: number, signal: AbortSignal): Promise<Fetched> {
    for (let n = 0; ; n++) {
      try {
        return await inAttemptSpan(op, n + 1, templates.get(op.id)!, () => send(op, input, path, authorization, signal))
      } catch (error) {
        if (op.method !== 'GET' || n >= policy.retries || !isRetryable(error)) throw error
        const delay = retryDelay(policy, n, error)
        if (delay === undefined || Date.now() + delay >= deadline) throw error
        input.log.warn({ operation: op.id, retry: n + 1, delayMs: delay, upstreamStatus: (error as { upstreamStatus?: number }).upstreamStatus }, 'retrying hub call')
        await sleep(delay, undefined, { signal }).catch(() => { throw gatewayError('UPSTREAM_TIMEOUT') })
      }
    }
  }

  /** With the current token; a 401 gets one new token (login, a rotated file) and one more try. */
  async function authorized (op: ResolvedOperation, input: Call, path: string, deadline: number, signal: AbortSignal): Promise<Fetched> {
    const authorization = op.headers.includes('authorization') ? await credentials.authorization(input.request) : ''
    try {
      return await attempt(op, input, path, authorization, deadline, signal)
    } catch (error) {
      const status = (error as { upstreamStatus?: number }).upstreamStatus
      if (status !== 401 || authorization === '' || !(await credentials.refresh(authorization))) throw error
      input.log.info({ operation: op.id }, 'hub refused the token: retrying once with a new one')
      return attempt(op, input, path, await credentials.authorization(input.request), deadline, signal)
    }
  }

  /** The cache key of a lookup: whose data it is, so forwarded tokens never share answers, and the hub address. */
  function cacheKey (input: Call, path: string): string {
    return `${credentials.identity(input.request)} ${path}`
  }

  /**
   * A place among the caller's hub calls in flight, or RATE_LIMITED when it
   * has UPSTREAM_MAX_CALLS_PER_CLIENT of them already: one caller cannot
   * take every connection to the hub. A lookup that starts no hub call (the
   * cache answers it, or it joins one in flight) needs none. Returns the
   * release.
   */
  function admit (op: ResolvedOperation, input: Call, path: string): () => void {
    const limit = config.UPSTREAM_MAX_CALLS_PER_CLIENT
    const request = input.request
    const caller = request?.client?.name ?? request?.ip
    if (limit === 0 || caller === undefined) return () => {}
    if (op.method === 'GET' && !cache.wouldCall(cacheKey(input, path), input.fresh === true)) return () => {}
    const who = request?.client != null ? `client ${caller}` : `address ${caller}`
    const count = inFlight.get(who) ?? 0
    if (count >= limit) {
      input.log.info({ operation: op.id, inFlight: count }, 'caller has too many hub calls in flight')
      throw gatewayError('RATE_LIMITED', { retryAfter: '1' })
    }
    inFlight.set(who, count + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (inFlight.get(who) ?? 1) - 1
      if (left === 0) inFlight.delete(who)
      else inFlight.set(who, left)
    }
  }

  async function execute (op: ResolvedOperation, input: Call, path: string): Promise<CallResult> {
    // The deadline starts with the hub call: a cache hit sets no timer.
    const run = () => authorized(op, input, path, Date.now() + config.UPSTREAM_DEADLINE_MS, AbortSignal.timeout(config.UPSTREAM_DEADLINE_MS))
    if (op.method !== 'GET') {
      return resultOf(await run())
    }
    const key = cacheKey(input, path)
    const ttlMs = op.cacheTtlSeconds * 1000
    const staleMs = config.CACHE_STALE_IF_ERROR_SECONDS * 1000
    const lookup = await cache.load(key, {
      ttlMs,
      staleMs,
      refresh: input.fresh === true,
      serveStaleOn: (error) => ['UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT'].includes((error as { code?: string }).code ?? '')
    }, async () => {
      const fetched = await run()
      // Only an answer the cache keeps needs memory of its own.
      if (ttlMs > 0 || staleMs > 0) own(fetched)
      return { value: fetched, bytes: fetched.body.length + ANSWER_OVERHEAD_BYTES }
    })
    const { value, fetchedAt } = lookup.entry
    if (lookup.stale) input.log.warn({ operation: op.id, ageSeconds: Math.round((Date.now() - fetchedAt) / 1000) }, 'hub failed: serving a stale answer')
    return resultOf(value, { cached: lookup.cached, stale: lookup.stale, ageSeconds: Math.floor((Date.now() - fetchedAt) / 1000), ttlSeconds: op.cacheTtlSeconds })
  }

  return {
    operations,
    async call (caller, callInput) {
      const input: Call = { ...callInput, request: caller, requestId: caller.id, log: caller.log }
      const op = operations.get(input.operation)
      if (op === undefined) throw new Error(`unknown operation ${input.operation}`)
      // A value that cannot be placed is the caller's error, not a hub call that failed.
      const path = buildPath(op, input.params ?? {}, config.UPSTREAM_PARAM_PLACEMENT, upstreams[op.service].basePath)
      const release = admit(op, input, path)
      const started = process.hrtime.bigint()
      try {
        const result = await inCallSpan(op, breakers.get(op.id)!.state, () => execute(op, input, path),
          ({ cache }): Record<string, string> => cache === undefined ? {} : { 'gateway.hub.cache': cache.stale ? 'stale' : cache.cached ? 'hit' : 'miss' })
        input.request.upstreamStatus = result.upstreamStatus
        observe?.(op.id, result.cache?.cached === true ? (result.cache.stale ? 'stale' : 'cached') : 'ok', Number(process.hrtime.bigint() - started) / 1e9)
        return result
      } catch (error) {
        const outcome = outcomeOf(error)
        const status = (error as { upstreamStatus?: number }).upstreamStatus
        if (status !== undefined) input.request.upstreamStatus = status
        observe?.(op.id, outcome, Number(process.hrtime.bigint() - started) / 1e9)
        input.log.warn({ operation: op.id, outcome, err: (error as { cause?: unknown }).cause ?? error }, 'upstream call failed')
        throw error
      } finally {
        release()
      }
    },
    circuits () {
      return [...breakers].map(([operation, breaker]) => ({ upstream: operations.get(operation)!.service, operation, state: breaker.state }))
    },
    cacheUsage () {
      return { entries: cache.size, bytes: cache.bytes, failures: cache.failures }
    },
    async close () {
      cache.close()
      for (const breaker of breakers.values()) breaker.shutdown()
      await credentials.close()
      // Let calls in flight finish, but never wait on a hung hub longer than a moment.
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
      // After the calls in flight, which may be waiting on a thread.
      await transcoding?.close()
    }
  }
}
