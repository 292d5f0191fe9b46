/**
 * The decoder: a 2xx answer's bytes into our JSON, framed in the fresh
 * envelope. The transcoder's fast path first (on a thread for a large
 * answer), the reference path (parse, normalize, report exactly what is
 * wrong) where the transcoder gives up.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config/load.ts'
import { gatewayError } from '../errors.ts'
import { DRIFT } from '../mapping/drift.ts'
import { ShapeError } from '../mapping/shape-error.ts'
import type { Transcoded } from '../mapping/transcode/index.ts'
import { envelopeAround, FRESH_FRAME } from '../schemas/envelope.ts'
import { reportedFailure } from './answer-failure.ts'
import { fetchedOf, type CallResult, type Fetched } from './answer.ts'
import type { Policy, ReadAnswer } from './call-path.ts'
import type { DriftReporter } from './drift.ts'
import { oneTurnEach } from './one-turn-each.ts'
import { extract } from './reference-path.ts'
import type { OperationMap, ResolvedOperation } from './resolve-operations.ts'
import { createTranscodePool, threadSetup, transcodeThreads } from './transcode-pool.ts'

/**
 * Answers from this size on are transcoded on a thread (transcode-pool.ts), or else read one per
 * turn of the event loop (see oneTurnEach).
 */
export const LARGE_ANSWER_BYTES = 256 * 1024

/**
 * Bodies up to this size are joined in one reused buffer (see contiguous); larger ones get their
 * own.
 */
const SCRATCH_KEEP_BYTES = 4 * 1024 * 1024

export interface DecoderOptions {
  operations: OperationMap
  config: Pick<Config, 'TRANSCODE_THREADS'>
  /** The UTC offset of the hub's local times (the profile's timeZone), for the threads. */
  timeZone: string
  /**
   * Called when a 2xx answer is read by the reference path (the transcoder gave up, or there is
   * none).
   */
  onSlowPath?: ((operation: ResolvedOperation['id']) => void) | undefined
  /** Where what the hub sent beyond its documented forms is counted and logged. */
  drift?: DriftReporter | undefined
}

export interface Decoder {
  /**
   * Our answer of a 2xx body, as it arrived in chunks; `deadline` is the call's (its signal is
   * read only by a large answer, which may wait); `secrets` are scrubbed from the error text of a
   * 2xx answer that reports a failure. A 404 (passed on only for a list the hub answers so when it
   * has nothing) is an empty list.
   */
  decode(
    op: ResolvedOperation,
    chunks: readonly Buffer[],
    size: number,
    statusCode: number,
    deadline: { readonly signal: AbortSignal },
    log: FastifyBaseLogger,
    secrets: readonly string[]
  ): Fetched | Promise<Fetched>
  /** Ends the threads (after the calls in flight, which may be waiting on one). */
  close(): Promise<void>
}

/** An empty list, framed in the fresh envelope. */
function emptyList (statusCode: number): Fetched {
  const { body, json } = envelopeAround(Buffer.from('[]'), { count: 0, cached: false })
  return { json, count: 0, upstreamStatus: statusCode, body, cached: false }
}

export function createDecoder (options: DecoderOptions): Decoder {
  const { operations, config, timeZone, onSlowPath, drift } = options
  const largeAnswers = oneTurnEach()
  const threads = transcodeThreads(config.TRANSCODE_THREADS)
  const transcoding = threads === 0
    ? undefined
    : createTranscodePool(threads, threadSetup(operations, timeZone))
  let scratch: Buffer = Buffer.allocUnsafeSlow(64 * 1024)

  /**
   * The body in one buffer, valid until the next call: several chunks are
   * copied into a buffer reused by every answer (decodeBytes reads it at
   * once and keeps nothing of it), rather than a new one per answer.
   */
  function contiguous (chunks: readonly Buffer[], size: number): Buffer {
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
  async function onThread (
    op: ResolvedOperation,
    chunks: readonly Buffer[],
    size: number,
    signal: AbortSignal,
    log: FastifyBaseLogger
  ): Promise<Transcoded | { gaveUp: Buffer } | undefined> {
    try {
      return await transcoding!.run(op.id, chunks, size, signal)
    } catch (error) {
      // Waited past the deadline for a free thread.
      if (signal.aborted) throw gatewayError('UPSTREAM_TIMEOUT')
      log.error(
        { operation: op.id, err: error },
        'transcoding thread failed: reading the answer on the main thread'
      )
      return undefined
    }
  }

  /** The fast path's answer, its tolerances reported. */
  function fastAnswer (
    op: ResolvedOperation,
    fast: Transcoded,
    statusCode: number,
    log: FastifyBaseLogger
  ): Fetched {
    if (fast.drift !== 0) drift?.report(op.id, fast.drift, log)
    return fetchedOf(fast, statusCode)
  }

  /** Our JSON of a 2xx answer's bytes, framed in the fresh envelope. */
  function decodeBytes (
    op: ResolvedOperation,
    bytes: Buffer,
    statusCode: number,
    log: FastifyBaseLogger,
    secrets: readonly string[],
    fastTried = false
  ): Fetched {
    // The fast path; it gives up on anything but a well-formed answer of the documented shape.
    const fast =
      fastTried || op.transcode === undefined ? undefined : op.transcode(bytes, FRESH_FRAME)
    if (fast !== undefined) return fastAnswer(op, fast, statusCode, log)
    // The reference path: parse, normalize, and report exactly what is wrong. A slow path only
    // where there is a fast one it stands in for.
    if (fastTried || op.transcode !== undefined) onSlowPath?.(op.id)
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
    // A 2xx answer that reports a failure (as the profile recognises one) is that failure, not an
    // empty list.
    const failure = reportedFailure(op, parsed, secrets)
    if (failure !== undefined) {
      drift?.report(
        op.id,
        DRIFT.failure,
        log,
        failure.empty
          ? { answeredAs: 'an empty list' }
          : { answeredAs: (failure.error as { code?: string }).code }
      )
      if (!failure.empty) throw failure.error
      data = []
    } else {
      let bits = 0
      // By bit: each kind's log line carries its own details only (answer-key: the keys).
      const details = new Map<number, Record<string, unknown>>()
      op.drift.bits = 0
      try {
        data = extract(op, parsed, (bit, more) => {
          bits |= bit
          if (more !== undefined && !details.has(bit)) details.set(bit, more)
        })
      } catch (error) {
        if (error instanceof ShapeError) {
          throw gatewayError('UPSTREAM_BAD_RESPONSE', { cause: error })
        }
        throw error
      } finally {
        bits |= op.drift.bits
        op.drift.bits = 0
      }
      let rest = bits
      for (const [bit, more] of details) {
        drift?.report(op.id, bit, log, more)
        rest &= ~bit
      }
      if (rest !== 0) drift?.report(op.id, rest, log)
    }
    const count = Array.isArray(data) ? data.length : undefined
    const { body, json } = envelopeAround(Buffer.from(JSON.stringify(data)), {
      count,
      cached: false
    })
    return { json, count, upstreamStatus: statusCode, body, cached: false }
  }

  return {
    decode (op, chunks, size, statusCode, deadline, log, secrets) {
      // A 404 of a list the hub answers so when it has nothing (transport.ts): no list to read.
      if (statusCode === 404) return emptyList(statusCode)
      if (size < LARGE_ANSWER_BYTES) {
        return decodeBytes(op, contiguous(chunks, size), statusCode, log, secrets)
      }
      const signal = deadline.signal
      return (async () => {
        const fast =
          transcoding === undefined || op.transcode === undefined
            ? undefined
            : await onThread(op, chunks, size, signal, log)
        if (fast !== undefined && !('gaveUp' in fast)) return fastAnswer(op, fast, statusCode, log)
        return largeAnswers.run(() => {
          // Waited past the deadline for its turn: not worth the work any more.
          if (signal.aborted) throw gatewayError('UPSTREAM_TIMEOUT')
          // Given up on by a thread's transcoder: the reference path reads the body it sent back.
          return fast === undefined
            ? decodeBytes(op, contiguous(chunks, size), statusCode, log, secrets)
            : decodeBytes(op, fast.gaveUp, statusCode, log, secrets, true)
        })
      })()
    },
    close: async () => transcoding?.close()
  }
}

/**
 * The decode step: the exchange below reads a 2xx body with `decoder` (as
 * an undici interceptor wraps the handler). `apiKey` and the call's
 * authorization are scrubbed from the text of a 2xx answer that reports a
 * failure.
 */
export function decodePolicy (decoder: Decoder, apiKey: string): Policy {
  const read: ReadAnswer = (chunks, size, statusCode, { op, deadline, log, authorization }) =>
    decoder.decode(op, chunks, size, statusCode, deadline, log, [apiKey, authorization])
  return (next) => (ctx) => {
    ctx.read = read
    return next(ctx)
  }
}
