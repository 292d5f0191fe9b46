import { hash } from 'node:crypto'
import type { Clock } from '../../clock.ts'
import type { TicketStore } from '../types.ts'

/**
 * Tickets in this process's memory (one instance), by the SHA-256 of the
 * ticket. At most maxEntries unused ones are kept; past that the oldest go.
 */
export function createMemoryTicketStore ({
  clock,
  maxEntries = 10_000
}: {
  clock: Clock
  maxEntries?: number
}): TicketStore {
  const tickets = new Map<string, { client: string | null; expiresAt: number }>()
  return {
    async issue (ticket, client, ttlMs) {
      const now = clock()
      for (const [key, { expiresAt }] of tickets) {
        if (expiresAt > now && tickets.size < maxEntries) break
        tickets.delete(key)
      }
      tickets.set(hash('sha256', ticket, 'base64url'), { client, expiresAt: now + ttlMs })
    },
    async redeem (ticket) {
      const key = hash('sha256', ticket, 'base64url')
      const held = tickets.get(key)
      tickets.delete(key)
      return held === undefined || held.expiresAt <= clock() ? undefined : { client: held.client }
    }
  }
}
