import type { FastifyBaseLogger } from 'fastify'
import type { Clock } from '../../clock.ts'
import { compareEventIds, FIRST_POSITION, nextEventId, parseEventId } from '../event-ids.ts'
import type { EventLog, EventWindow, LogEntry } from '../types.ts'

export interface MemoryEventLogOptions extends EventWindow {
  log: FastifyBaseLogger
  clock: Clock
}

/**
 * The event log of one instance: the entries of the window in an array, ids
 * made as Redis makes stream ids. publish() hands the event to every
 * subscriber before it returns; a subscriber that throws is logged and the
 * others still get it. A restart forgets the log: a reader that resumes
 * afterwards from an id of the old one is told to reload.
 */
export function createMemoryEventLog ({
  log,
  clock,
  windowMs,
  maxEntries
}: MemoryEventLogOptions): EventLog {
  const listeners = new Set<(entry: LogEntry) => void>()
  let entries: LogEntry[] = []
  let last = FIRST_POSITION
  // The last id dropped from the window: a reader there has missed nothing.
  let trimmedThrough = FIRST_POSITION

  function trim () {
    const cutoff = clock() - windowMs
    let drop = Math.max(0, entries.length - maxEntries)
    while (drop < entries.length && (parseEventId(entries[drop]!.id)?.ms ?? 0) < cutoff) drop++
    if (drop === 0) return
    trimmedThrough = entries[drop - 1]!.id
    entries = entries.slice(drop)
  }

  /**
   * Where `id` is in the window: the index of the entry after it, or -1 when the window does not
   * hold it.
   */
  function after (id: string): number {
    if (id === trimmedThrough) return 0
    let low = 0
    let high = entries.length - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const order = compareEventIds(entries[middle]!.id, id)
      if (order === 0) return middle + 1
      if (order < 0) low = middle + 1
      else high = middle - 1
    }
    return -1
  }

  return {
    async publish (event) {
      last = nextEventId(last, clock())
      const entry: LogEntry = { ...event, id: last }
      entries.push(entry)
      trim()
      for (const listener of listeners) {
        try {
          listener(entry)
        } catch (error) {
          log.error({ err: error, eventId: entry.id }, 'event listener failed')
        }
      }
    },
    subscribe (listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    async since (id) {
      trim()
      const from = after(id)
      return from === -1
        ? { state: 'expired' }
        : { state: 'replayed', entries: entries.slice(from) }
    },
    position: () => last,
    async close () {
      listeners.clear()
    }
  }
}
