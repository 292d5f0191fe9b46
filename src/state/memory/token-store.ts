import { systemClock, type Clock } from '../../clock.ts'
import type { HubSession, TokenStore } from '../types.ts'

/**
 * The hub session of one process (UPSTREAM_CREDENTIALS=login): the one it
 * logged in with, and at most one login at a time, which every caller
 * asking meanwhile shares.
 */
export function createMemoryTokenStore ({
  clock = systemClock
}: { clock?: Clock } = {}): TokenStore {
  let session: HubSession | undefined
  let pending: Promise<HubSession> | undefined
  const current = (): HubSession | undefined =>
    session !== undefined && session.expiresAt > clock() ? session : undefined
  return {
    async get () {
      return current()
    },
    renew (rejected, login) {
      if (pending !== undefined) return pending
      // Replaced since the caller got `rejected` (or, for a first login, there is one): no login.
      const held = current()
      if (held !== undefined && held.authorization !== rejected) return Promise.resolve(held)
      pending = login().then(
        (fresh) => {
          session = fresh
          pending = undefined
          return fresh
        },
        (error: unknown) => {
          pending = undefined
          throw error
        }
      )
      return pending
    }
  }
}
