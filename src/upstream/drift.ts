import type { FastifyBaseLogger } from 'fastify'
import { DRIFT_KINDS } from '../mapping/drift.ts'

/**
 * What the hub sent beyond its documented forms and the gateway read anyway
 * (mapping/drift.ts), made visible: each kind counted per operation (a
 * metric), and logged the first time an operation needs it, so that an
 * operator sees what the hub really sends without a log line per answer.
 */
export interface DriftReporter {
  /**
   * Counts each DRIFT bit of `bits` for `operation`; logs the first of each kind, with `details`
   * (answer-key: the keys).
   */
  report(
    operation: string,
    bits: number,
    log: Pick<FastifyBaseLogger, 'warn'>,
    details?: Record<string, unknown>
  ): void
}

const MESSAGES: Record<string, string> = {
  'number-string': 'hub answer drift: a number sent as a string, read as the number',
  'flag-string': 'hub answer drift: a 0/1 flag sent as a string, read as the flag',
  'null-string': 'hub answer drift: a string the profile says means null, read as null',
  'date-form':
    'hub answer drift: a date in another form than documented, read as the day or moment it says',
  // The message of the log line tests and dashboards already know.
  'answer-key': 'upstream response key drift',
  'error-field': "hub answer drift: an error's text in another member than message",
  'failure-2xx': 'hub answer drift: a 2xx answer reporting a failure, answered as that failure',
  'invalid-value': 'hub answer drift: a value its field cannot hold, answered as null or left out'
}

export function createDriftReporter (
  count?: (operation: string, kind: string) => void
): DriftReporter {
  const logged = new Set<string>()
  return {
    report (operation, bits, log, details) {
      for (const [bit, kind] of DRIFT_KINDS) {
        if ((bits & bit) === 0) continue
        count?.(operation, kind)
        const once = `${operation}\u0000${kind}`
        if (logged.has(once)) continue
        logged.add(once)
        // Once per operation and kind; every occurrence is counted in gateway_hub_drift_total.
        log.warn({ operation, drift: kind, ...details }, MESSAGES[kind] ?? 'hub answer drift')
      }
    }
  }
}
