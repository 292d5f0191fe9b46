/**
 * Event ids are positions in the event log: `<ms>-<seq>`, the form of a Redis
 * stream id (milliseconds since the epoch, then a sequence number within that
 * millisecond), in memory and in Redis alike. They order events: a reader that
 * has seen `a` has seen every event it may see up to `a`.
 */

/** An event id as callers send it back (`Last-Event-ID`, `lastEventId`). */
export const EVENT_ID_PATTERN = '^[0-9]{1,15}-[0-9]{1,15}$'

const ID = new RegExp(EVENT_ID_PATTERN)

/** The position before any event: a reader at 0-0 has seen nothing yet. */
export const FIRST_POSITION = '0-0'

export interface EventPosition { ms: number, seq: number }

/** The id's two numbers, or undefined when it is not an event id. */
export function parseEventId (id: string): EventPosition | undefined {
  if (!ID.test(id)) return undefined
  const dash = id.indexOf('-')
  return { ms: Number(id.slice(0, dash)), seq: Number(id.slice(dash + 1)) }
}

/**
 * Negative when `a` comes before `b`, 0 when they are the same, positive after. Both must be event
 * ids.
 */
export function compareEventIds (a: string, b: string): number {
  const x = parseEventId(a)
  const y = parseEventId(b)
  if (x === undefined || y === undefined) throw new TypeError('not an event id')
  return x.ms - y.ms || x.seq - y.seq
}

/**
 * The id after `last` at time `now`, as Redis makes them: a new millisecond starts at 0, the same
 * (or a clock gone back) counts on.
 */
export function nextEventId (last: string, now: number): string {
  const previous = parseEventId(last) ?? { ms: 0, seq: 0 }
  return now > previous.ms ? `${now}-0` : `${previous.ms}-${previous.seq + 1}`
}

/** The id just before `id` (FIRST_POSITION for the first there can be). */
export function previousEventId (id: string): string {
  const { ms, seq } = parseEventId(id) ?? { ms: 0, seq: 0 }
  if (seq > 0) return `${ms}-${seq - 1}`
  return ms > 0 ? `${ms - 1}-999999999999999` : FIRST_POSITION
}
