import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import type { Rng } from '../../src/sandbox/prng.ts'
import { sleep } from './processes.ts'

/** Where an attempt was sent: HAProxy, or one replica directly. */
export interface Target { name: string, url: string, incarnation (): number }

/** One HTTP attempt of a write, as its client saw it. */
export interface Attempt {
  n: number
  target: string
  /** The replica's incarnation when the attempt was sent (direct attempts only). */
  incarnation?: number
  /** ms since the run started. */
  start: number
  end: number
  status?: number
  /** The envelope's `code`, when the answer is one. */
  code?: string
  body?: string
  replayed?: boolean
  retryAfter?: string
  /** A network error (connection refused or reset, the client's timeout). */
  error?: string
  /** The last pass, after the faults, for writes whose client had given up. */
  final?: boolean
}

export type Outcome = 'ok' | 'unknown' | 'gave-up' | 'refused'

export interface Write {
  key: string
  kind: 'offer' | 'booked'
  attempts: Attempt[]
  outcome?: Outcome
}

export interface WriterOptions {
  /** The writer client's key (Authorization: Bearer). */
  clientKey: string
  targets: Target[]
  /** Attempts per key at most: the first and its retries. */
  maxAttempts: number
  /** How long one attempt may take before the client gives up on it. */
  attemptTimeoutMs: number
  /**
   * The share of attempts sent through HAProxy (targets[0]); the rest go to a replica picked at
   * random.
   */
  viaProxy: number
  rng: Rng
  now: () => number
}

export const OFFERS = `/v1/bookings/${F.bookingRequestId}/offers`
export const BOOKED = `/v1/bookings/${F.bookingRequestId}/booked`

/**
 * The request of a key: its own serviceOrderId or note, which the hub's log shows, so that each hub
 * call names its key.
 */
export function requestOf (write: Pick<Write, 'key' | 'kind'>): { path: string, body: unknown } {
  return write.kind === 'offer'
    ? {
        path: OFFERS,
        body: {
          serviceOrderId: write.key,
          price: 1250000.5,
          offeredAt: '2024-03-01T08:15:00+07:00'
        }
      }
    : { path: BOOKED, body: { booked: true, note: write.key } }
}

function retryAfterMs (value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined
  return Math.min(Number(value) * 1000, 5000)
}

/** Whether a careful client retries this answer: a network error, a 5xx, a 429. */
export function retryable (attempt: Attempt): boolean {
  return (
    attempt.error !== undefined ||
    (attempt.status !== undefined && (attempt.status >= 500 || attempt.status === 429))
  )
}

/**
 * Sends one attempt of a write and records what came back. The client
 * reads the whole answer, as a careful client does before it decides.
 */
export async function attemptOnce (
  write: Write,
  target: Target,
  options: Pick<WriterOptions, 'clientKey' | 'attemptTimeoutMs' | 'now'>,
  extra: Partial<Attempt> = {}
): Promise<Attempt> {
  const { path, body } = requestOf(write)
  const attempt: Attempt = {
    n: write.attempts.length + 1,
    target: target.name,
    start: options.now(),
    end: 0,
    ...extra
  }
  if (target.name !== 'haproxy') attempt.incarnation = target.incarnation()
  write.attempts.push(attempt)
  try {
    const res = await fetch(`${target.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${options.clientKey}`,
        'content-type': 'application/json',
        'idempotency-key': write.key
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(options.attemptTimeoutMs)
    })
    const text = await res.text()
    attempt.status = res.status
    attempt.body = text
    if (res.headers.get('idempotent-replayed') === 'true') attempt.replayed = true
    const retryAfter = res.headers.get('retry-after')
    if (retryAfter !== null) attempt.retryAfter = retryAfter
    try {
      const code = (JSON.parse(text) as { code?: unknown }).code
      if (typeof code === 'string') attempt.code = code
    } catch {
      // not the envelope (HAProxy's own pages)
    }
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    attempt.error =
      (error as Error).name === 'TimeoutError'
        ? 'client timeout'
        : (cause?.code ?? cause?.message ?? String(error))
  }
  attempt.end = options.now()
  return attempt
}

/**
 * One write as a careful client makes it: its own Idempotency-Key, retried
 * on any failure (a network error, a 5xx, a 429) up to maxAttempts, each
 * time against any replica (HAProxy or one picked at random), after the
 * answer's retry-after or a growing pause. A 2xx ends it, as does 409
 * OUTCOME_UNKNOWN (the gateway says the outcome cannot be known: a careful
 * client stops and finds out) and any other 4xx.
 */
export async function write (record: Write, options: WriterOptions): Promise<void> {
  const { targets, rng } = options
  for (let n = 1; n <= options.maxAttempts; n++) {
    const target = rng.chance(options.viaProxy) ? targets[0]! : rng.pick(targets.slice(1))
    const attempt = await attemptOnce(record, target, options)
    if (attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300) {
      record.outcome = 'ok'
      return
    }
    if (attempt.code === 'OUTCOME_UNKNOWN') {
      record.outcome = 'unknown'
      return
    }
    if (!retryable(attempt)) {
      record.outcome = 'refused'
      return
    }
    if (n < options.maxAttempts) {
      await sleep(
        retryAfterMs(attempt.retryAfter) ?? Math.min(100 * 2 ** (n - 1), 2000) + rng.int(0, 100)
      )
    }
  }
  record.outcome = 'gave-up'
}

export interface Writers {
  writes: Write[]
  /** Stops starting new writes; resolves when those under way have ended. */
  stop (): Promise<void>
  /** Writes in flight to a target right now (direct attempts). */
  inFlight (target: string): number
}

/**
 * `concurrency` writer loops, each making one write after the other with a new key, until stopped.
 */
export function startWriters (
  concurrency: number,
  prefix: string,
  options: WriterOptions
): Writers {
  const writes: Write[] = []
  const state = { running: true, next: 0 }
  const loops = Array.from({ length: concurrency }, async () => {
    while (state.running) {
      const record: Write = {
        key: `${prefix}-${String(state.next++).padStart(6, '0')}`,
        kind: options.rng.chance(0.5) ? 'offer' : 'booked',
        attempts: []
      }
      writes.push(record)
      await write(record, options)
    }
  })
  return {
    writes,
    async stop () {
      state.running = false
      await Promise.all(loops)
    },
    inFlight: (target) =>
      writes.filter(
        (each) =>
          each.outcome === undefined &&
          each.attempts.at(-1)?.target === target &&
          each.attempts.at(-1)?.end === 0
      ).length
  }
}
