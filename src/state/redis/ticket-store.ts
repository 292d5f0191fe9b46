import { hash } from 'node:crypto'
import type { TicketStore } from '../types.ts'
import { StateUnavailableError } from '../errors.ts'
import { redisReason, type RedisConnection } from './connection.ts'
import { parseVersioned } from './versioned.ts'

const VERSION = 1

/**
 * Tickets in Redis, so that a ticket issued by one replica is redeemed by
 * whichever the stream's request reaches: SET PX under the SHA-256 of the
 * ticket, taken back with GETDEL, once.
 */
export function createRedisTicketStore ({
  connection
}: {
  connection: RedisConnection
}): TicketStore {
  const { client } = connection
  const keyOf = (ticket: string) => `events:ticket:${hash('sha256', ticket, 'base64url')}`
  async function run<T> (command: () => Promise<T>): Promise<T> {
    if (connection.health() === 'down') throw new StateUnavailableError('Redis is down')
    try {
      return await command()
    } catch (error) {
      throw new StateUnavailableError(redisReason(error))
    }
  }
  return {
    async issue (ticket, name, ttlMs) {
      await run(() =>
        client.set(keyOf(ticket), JSON.stringify({ v: VERSION, client: name }), 'PX', ttlMs)
      )
    },
    async redeem (ticket) {
      const text = await run(() => client.getdel(keyOf(ticket)))
      const held = text === null ? undefined : parseVersioned(text, VERSION)
      if (held === undefined || (typeof held.client !== 'string' && held.client !== null)) {
        return undefined
      }
      return { client: held.client }
    }
  }
}
