import type { RecordedRequest } from '../../src/sandbox/index.ts'
import type { FaultRecord } from './nemesis.ts'
import type { Attempt, Write } from './workload.ts'

/** A hub call as the hub's own log shows it. */
export interface HubCall { at: number, requestId: string }

export interface Violation { rule: string, key?: string, detail: string }

/**
 * The envelope codes a write may be answered with, by status, besides 2xx: what
 * docs/api.md#idempotent-writes and the OpenAPI document say.
 */
const DOCUMENTED: Record<number, readonly string[]> = {
  409: ['OUTCOME_UNKNOWN'],
  429: ['RATE_LIMITED'],
  502: ['UPSTREAM_UNAVAILABLE', 'UPSTREAM_BAD_RESPONSE', 'UPSTREAM_AUTH_FAILED'],
  503: ['IDEMPOTENCY_UNAVAILABLE', 'SHUTTING_DOWN', 'OVERLOADED', 'UPSTREAM_UNAVAILABLE'],
  504: ['UPSTREAM_TIMEOUT']
}
/** Answers that must carry retry-after (a careful client waits that long). */
const RETRY_AFTER = new Set([429, 503])

/** The key each hub write names: the offer's idServiceOrder, the booked notification's note. */
export function hubCallsByKey (requests: readonly RecordedRequest[], startedAt: number): Map<string, HubCall[]> {
  const calls = new Map<string, HubCall[]>()
  for (const request of requests) {
    if (request.operation !== 'DetilBooking' && request.operation !== 'DetilBooking/isBooked') continue
    const body = request.body as { idServiceOrder?: unknown, booking_note?: unknown } | undefined
    const key = request.operation === 'DetilBooking' ? body?.idServiceOrder : body?.booking_note
    if (typeof key !== 'string') continue
    const list = calls.get(key) ?? []
    list.push({ at: request.at - startedAt, requestId: String(request.headers['x-request-id'] ?? '') })
    calls.set(key, list)
  }
  return calls
}

/** How an answer is counted in the report. */
export function answerClass (attempt: Attempt): string {
  if (attempt.error !== undefined) return `network: ${attempt.error}`
  const status = attempt.status ?? 0
  if (status >= 200 && status < 300) return attempt.replayed === true ? `${status} (replayed)` : String(status)
  if (attempt.code !== undefined) return `${status} ${attempt.code}`
  return `${status} (HAProxy's own page)`
}

/** Why an answer breaks the contract, or undefined when it is a documented one. */
function undocumented (attempt: Attempt): string | undefined {
  if (attempt.error !== undefined) return undefined
  const status = attempt.status ?? 0
  if (status >= 200 && status < 300) return undefined
  if (attempt.code === undefined) {
    // HAProxy's own 502/503/504 when a replica dies under a request or none is up
    // (docs/operations.md#the-fault-suite).
    if (attempt.target === 'haproxy' && [502, 503, 504].includes(status)) return undefined
    return `${status} without the envelope from ${attempt.target}`
  }
  if (!(DOCUMENTED[status] ?? []).includes(attempt.code)) return `${status} ${attempt.code} is not a documented answer of a write`
  if (RETRY_AFTER.has(status) && attempt.retryAfter === undefined) return `${status} ${attempt.code} without retry-after`
  return undefined
}

/** The answer's data names this key: the replay is this write's answer, not another's. */
function answersKey (write: Write, body: string | undefined): boolean {
  try {
    const data = (JSON.parse(body ?? '') as { data?: { serviceOrderId?: unknown, note?: unknown } }).data
    return (write.kind === 'offer' ? data?.serviceOrderId : data?.note) === write.key
  } catch {
    return false
  }
}

/**
 * The invariants of a write, from the hub's own log and what its client
 * saw: at most one hub call per key; exactly one for a key answered 2xx;
 * every 2xx the same bytes (the later ones replays); every other answer a
 * documented one (503 with retry-after, 409 OUTCOME_UNKNOWN, the hub's
 * trouble in the envelope, HAProxy's own page when a replica died under it).
 */
export function checkWrite (write: Write, calls: readonly HubCall[]): Violation[] {
  const violations: Violation[] = []
  const { key } = write
  if (calls.length > 1) violations.push({ rule: 'at most one hub call per key', key, detail: `${calls.length} hub calls` })
  const ok = write.attempts.filter(attempt => attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300)
  if (ok.length > 0 && calls.length !== 1) violations.push({ rule: 'a key answered 2xx made exactly one hub call', key, detail: `${calls.length} hub calls` })
  const first = ok[0]
  for (const later of ok.slice(1)) {
    if (later.body !== first?.body) violations.push({ rule: 'every 2xx of a key is the first answer, byte for byte', key, detail: `attempt ${later.n} differs from attempt ${first?.n}` })
    if (later.replayed !== true) violations.push({ rule: 'a later 2xx of a key is a replay', key, detail: `attempt ${later.n} is not marked idempotent-replayed` })
  }
  for (const each of ok) {
    if (!answersKey(write, each.body)) violations.push({ rule: 'a 2xx answers its own key', key, detail: `attempt ${each.n}: ${each.body?.slice(0, 200)}` })
  }
  for (const attempt of write.attempts) {
    const why = undocumented(attempt)
    if (why !== undefined) violations.push({ rule: 'no answer other than the documented ones', key, detail: `attempt ${attempt.n}: ${why}: ${attempt.body?.slice(0, 200) ?? ''}` })
  }
  return violations
}

/** What a key's answers said of it over time, besides the invariants above. */
export interface Verdicts {
  /** Answered 409 OUTCOME_UNKNOWN though the hub never got it. */
  unknownNeverSent: boolean
  /** Answered 2xx, later OUTCOME_UNKNOWN (its answer was lost before it was stored). */
  answeredThenUnknown: boolean
}

const isOk = (attempt: Attempt) =>
  attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300

/**
 * A key's verdicts, in the order its answers came (a key's attempts are one
 * after the other): once told OUTCOME_UNKNOWN, a key is never answered 2xx
 * (a violation); the rest is counted.
 */
export function checkVerdicts (write: Write,
  calls: readonly HubCall[]): { verdicts: Verdicts, violations: Violation[] } {
  const unknown = write.attempts.findIndex(attempt => attempt.code === 'OUTCOME_UNKNOWN')
  const answered = write.attempts.findIndex(isOk)
  const violations: Violation[] = []
  const later = unknown === -1 ? undefined : write.attempts.slice(unknown + 1).find(isOk)
  if (later !== undefined) {
    const detail = `attempt ${later.n} answered ${later.status}`
    violations.push({ rule: 'a key told OUTCOME_UNKNOWN stays unknown', key: write.key, detail })
  }
  return {
    verdicts: {
      unknownNeverSent: unknown !== -1 && calls.length === 0,
      answeredThenUnknown: answered !== -1 && unknown > answered
    },
    violations
  }
}

const ms = (value: number) => `${(value / 1000).toFixed(3)} s`

/** A violation's key, told in full: its attempts, its hub calls, the faults around them. */
export function timeline (write: Write, calls: readonly HubCall[], faults: readonly FaultRecord[]): string {
  const first = write.attempts[0]?.start ?? 0
  const last = Math.max(...write.attempts.map(attempt => attempt.end), ...calls.map(call => call.at))
  const lines = [`key ${write.key} (${write.kind}), outcome ${write.outcome ?? 'none'}`]
  for (const attempt of write.attempts) {
    lines.push(`  attempt ${attempt.n}${attempt.final === true ? ' (final pass)' : ''} to ${attempt.target}${attempt.incarnation === undefined ? '' : `#${attempt.incarnation}`}: ${ms(attempt.start)} - ${ms(attempt.end)}: ${answerClass(attempt)}`)
  }
  for (const call of calls) lines.push(`  hub call at ${ms(call.at)} (x-request-id ${call.requestId})`)
  for (const fault of faults) {
    if (fault.end < first - 10_000 || fault.start > last + 10_000) continue
    lines.push(`  fault ${fault.kind} on ${fault.target}: ${ms(fault.start)} - ${ms(fault.end)}: ${fault.detail}`)
  }
  return lines.join('\n')
}
