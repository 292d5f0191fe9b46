import { subscribeEvents, type EventSubscription } from '../../clients/typescript/src/events.ts'
import type { Violation } from './checker.ts'
import type { Target } from './workload.ts'

/** What one reader saw. */
export interface ReaderReport {
  name: string
  /** Sockets opened (the first and every reconnection). */
  opened: number
  received: number
  /** Events received more than once. */
  duplicates: number
  /** Booked events expected (their writes answered 2xx) that never arrived. */
  missed: number
  /** Reload signals: the gateway said plainly that what was missed cannot be given (by reason). */
  reloads: Record<string, number>
}

export interface Readers {
  /** Stops every reader; then `check` compares what each saw with the events the writes caused. */
  stop (): Promise<void>
  check (expected: ReadonlySet<string>): { reports: ReaderReport[], violations: Violation[] }
}

/**
 * One event reader per target (each replica, and one through HAProxy), as a
 * web app holds it: the client's own subscribeEvents, which reconnects after
 * every close and resumes from the last event id it saw (the gateway replays
 * what it missed from its window, or says plainly that it must reload). Each
 * records the booked events it receives by their note (the write's key).
 * A reader that was never told to reload must miss no booked event a write
 * was answered 2xx for, and none may arrive twice.
 */
export function startReaders (targets: Target[], apiKey: string): Readers {
  const readers = targets.map(target => {
    const seen = new Map<string, number>()
    const reloads: Record<string, number> = {}
    let opened = 0
    let received = 0
    const subscription: EventSubscription = subscribeEvents({
      baseUrl: target.url,
      apiKey,
      // From the start of the log: the run's first events included.
      lastEventId: '0-0',
      reconnect: { minDelayMs: 100, maxDelayMs: 1000 },
      onOpen: () => { opened++ },
      onReload: (signal) => { reloads[signal.reason] = (reloads[signal.reason] ?? 0) + 1 },
      onEvent: (event) => {
        received++
        const note = (event.data as { note?: unknown }).note
        const id = typeof note === 'string' ? note : event.id
        seen.set(id, (seen.get(id) ?? 0) + 1)
      }
    })
    return { name: target.name, seen, reloads, subscription, opened: () => opened, received: () => received }
  })
  return {
    async stop () {
      // A moment for the last events on their way.
      await new Promise(resolve => setTimeout(resolve, 500))
      for (const reader of readers) reader.subscription.unsubscribe()
    },
    check (expected) {
      const reports: ReaderReport[] = []
      const violations: Violation[] = []
      for (const reader of readers) {
        let duplicates = 0
        let missed = 0
        for (const [id, count] of reader.seen) {
          if (count > 1) {
            duplicates++
            violations.push({ rule: 'no event delivered twice to a reader', key: id, detail: `${reader.name} received it ${count} times` })
          }
        }
        const told = Object.keys(reader.reloads).length > 0
        for (const key of expected) {
          if (reader.seen.has(key)) continue
          missed++
          if (!told) violations.push({ rule: 'no event lost for a resuming reader', key, detail: `${reader.name} never received it, and was never told to reload` })
        }
        reports.push({ name: reader.name, opened: reader.opened(), received: reader.received(), duplicates, missed, reloads: reader.reloads })
      }
      return { reports, violations }
    }
  }
}
