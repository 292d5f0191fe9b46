import { subscribeEvents, type EventSubscription } from '../../clients/typescript/src/events.ts'
import type { Violation } from './checker.ts'
import { sleep } from './processes.ts'
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
  /** When each event arrived and each reload was told (ms since the run started). */
  eventsAt: number[]
  reloadsAt: number[]
}

export interface Readers {
  /**
   * Waits until every reader has received each of `expected` (or was told
   * to reload), for `boundMs` at most, then stops them; `check` then
   * compares what each saw with the events the writes caused.
   */
  stop (expected: ReadonlySet<string>, boundMs: number): Promise<void>
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
export function startReaders (targets: Target[], apiKey: string, now: () => number): Readers {
  const readers = targets.map(target => {
    const seen = new Map<string, number>()
    const reloads: Record<string, number> = {}
    const eventsAt: number[] = []
    const reloadsAt: number[] = []
    let opened = 0
    const subscription: EventSubscription = subscribeEvents({
      baseUrl: target.url,
      apiKey,
      // From the start of the log: the run's first events included.
      lastEventId: '0-0',
      reconnect: { minDelayMs: 100, maxDelayMs: 1000 },
      onOpen: () => { opened++ },
      onReload: (signal) => {
        reloads[signal.reason] = (reloads[signal.reason] ?? 0) + 1
        reloadsAt.push(now())
      },
      onEvent: (event) => {
        eventsAt.push(now())
        const note = (event.data as { note?: unknown }).note
        const id = typeof note === 'string' ? note : event.id
        seen.set(id, (seen.get(id) ?? 0) + 1)
      }
    })
    const name = target.name
    return { name, seen, reloads, eventsAt, reloadsAt, subscription, opened: () => opened }
  })
  return {
    async stop (expected, boundMs) {
      const deadline = Date.now() + boundMs
      const done = () => readers.every(reader => reader.reloadsAt.length > 0 ||
        [...expected].every(key => reader.seen.has(key)))
      while (!done() && Date.now() < deadline) await sleep(100)
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
            violations.push({
              rule: 'no event delivered twice to a reader',
              key: id,
              detail: `${reader.name} received it ${count} times`
            })
          }
        }
        const told = Object.keys(reader.reloads).length > 0
        for (const key of expected) {
          if (reader.seen.has(key)) continue
          missed++
          if (!told) {
            violations.push({
              rule: 'no event lost for a resuming reader',
              key,
              detail: `${reader.name} never received it, and was never told to reload`
            })
          }
        }
        const { name, reloads, eventsAt, reloadsAt } = reader
        const [opened, received] = [reader.opened(), eventsAt.length]
        reports.push({ name, opened, received, duplicates, missed, reloads, eventsAt, reloadsAt })
      }
      return { reports, violations }
    }
  }
}
