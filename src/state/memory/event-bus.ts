import type { FastifyBaseLogger } from 'fastify'
import type { EventBus, GatewayEvent } from '../types.ts'

/**
 * Events within this process: publish() hands the event to every subscriber
 * at once, before it returns. A subscriber that throws is logged and the
 * others still get the event.
 */
export function createMemoryEventBus ({ log }: { log: FastifyBaseLogger }): EventBus {
  const listeners = new Set<(event: GatewayEvent) => void>()
  return {
    async publish (event) {
      for (const listener of listeners) {
        try {
          listener(event)
        } catch (error) {
          log.error({ err: error, eventId: event.id }, 'event listener failed')
        }
      }
    },
    subscribe (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    async close () {
      listeners.clear()
    }
  }
}
