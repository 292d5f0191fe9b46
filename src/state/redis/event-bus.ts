import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { EventBus, GatewayEvent } from '../types.ts'
import { redisReason, type RedisConnection } from './connection.ts'
import { parseVersioned } from './versioned.ts'

export interface RedisEventBusOptions {
  connection: RedisConnection
  /** Names this replica in its messages, so that it skips its own (default: a new UUID). */
  replicaId?: string
}

/** The channel, with the key prefix in front. */
export const EVENTS_CHANNEL = 'events'
/** Format of the messages; a reader skips any other. */
const VERSION = 1

interface Message { v: number, origin: string, event: GatewayEvent }

function decode (text: string): Message | undefined {
  const message = parseVersioned(text, VERSION)
  if (message === undefined) return undefined
  const { origin, event } = message
  if (typeof origin !== 'string' || event === null || typeof event !== 'object') return undefined
  const { id, type } = event as Record<string, unknown>
  if (typeof id !== 'string' || type !== 'booking.booked') return undefined
  return { v: VERSION, origin, event: event as GatewayEvent }
}

/**
 * Events for every replica's subscribers over Redis pub/sub. A replica
 * delivers its own events to its subscribers at once and skips them when
 * they come back from Redis (by its replica id), so each subscriber gets
 * each event once, whether Redis is up or not. Pub/sub keeps nothing: an
 * event published while a replica is cut off from Redis does not reach that
 * replica later; delivery between replicas resumes when the connections
 * are back (this bus subscribes again on reconnect).
 */
export function createRedisEventBus ({ connection, replicaId = randomUUID() }: RedisEventBusOptions): EventBus {
  const { client, log } = connection
  const channel = connection.channel(EVENTS_CHANNEL)
  const listeners = new Set<(event: GatewayEvent) => void>()
  let closed = false

  function deliver (event: GatewayEvent) {
    for (const listener of listeners) {
      try {
        listener(event)
      } catch (error) {
        log.error({ err: error, eventId: event.id }, 'event listener failed')
      }
    }
  }

  function onMessage (from: string, text: string) {
    if (from !== channel) return
    const message = decode(text)
    if (message === undefined) {
      log.warn({ channel }, 'events: skipped a message this version cannot read')
      return
    }
    if (message.origin !== replicaId) deliver(message.event)
  }

  // Subscribed on every 'ready', the first and each after a reconnection
  // (the connection's autoResubscribe is off, see connection.ts).
  const subscriber: Redis = connection.subscriber()
  subscriber.on('message', onMessage)
  function subscribe () {
    if (closed) return
    subscriber.subscribe(channel).catch((error: unknown) => {
      log.warn({ reason: redisReason(error) }, 'events: subscribing failed; trying again')
      // A connection that dropped subscribes again when ready; one that stayed up, in a second.
      setTimeout(() => { if (subscriber.status === 'ready') subscribe() }, 1000).unref()
    })
  }
  subscriber.on('ready', subscribe)
  if (subscriber.status === 'ready') subscribe()

  return {
    async publish (event) {
      deliver(event)
      if (closed || connection.health() === 'down') {
        log.debug({ eventId: event.id }, 'events: Redis down, delivered in this replica only')
        return
      }
      try {
        await client.publish(channel, JSON.stringify({ v: VERSION, origin: replicaId, event } satisfies Message))
      } catch (error) {
        log.warn({ reason: redisReason(error), eventId: event.id }, 'events: publishing to Redis failed, delivered in this replica only')
      }
    },
    subscribe (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    async close () {
      if (closed) return
      closed = true
      listeners.clear()
      subscriber.off('message', onMessage)
      subscriber.off('ready', subscribe)
      if (subscriber.status === 'ready') await subscriber.unsubscribe(channel).catch(() => {})
    }
  }
}
