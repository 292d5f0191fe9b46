import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Clock } from '../../clock.ts'
import { compareEventIds, FIRST_POSITION, previousEventId } from '../event-ids.ts'
import type { EventLog, EventsLost, EventWindow, LogEntry, NewEvent } from '../types.ts'
import { redisReason, type RedisConnection } from './connection.ts'
import { createGatewayScripts } from './functions.ts'

export interface RedisEventLogOptions extends EventWindow {
  connection: RedisConnection
  clock: Clock
  /** How long one read waits for new entries before it asks again (default 1000 ms). */
  blockMs?: number
  /**
   * How long an append waits for every replica in sync to hold it (WAIT); one
   * not acknowledged is appended again (REDIS_REPLICA_ACK_TIMEOUT_MS; 0: no wait, the default).
   */
  replicaAckTimeoutMs?: number
}

/** The stream, with the key prefix in front. */
export const EVENTS_KEY = 'events:log'
/** Where an appended event's token points at its id for the window (the key prefix in front). */
export const APPENDED_PREFIX = 'events:appended:'
/** Format of the entries (their `v` field); a reader skips any other. */
const VERSION = '1'
/** Entries one read takes at most. */
const READ_COUNT = 1000
/**
 * Reads that time out in a row (a frozen Redis, a half-open connection) before the reader's
 * connection is reopened.
 */
const STALE_AFTER_TIMEOUTS = 3

/** An entry's append token (its `t`, absent in entries of earlier gateways). */
function tokenOf (fields: string[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === 't') return fields[i + 1]
  return undefined
}

function decode (id: string, fields: string[]): LogEntry | undefined {
  const values = new Map<string, string>()
  for (let i = 0; i + 1 < fields.length; i += 2) values.set(fields[i]!, fields[i + 1]!)
  if (values.get('v') !== VERSION) return undefined
  let value: unknown
  try {
    value = JSON.parse(values.get('e') ?? '')
  } catch {
    return undefined
  }
  if (value === null || typeof value !== 'object') return undefined
  const entry = value as Record<string, unknown>
  if (
    entry.type === 'booking.booked' &&
    typeof entry.requestId === 'string' &&
    entry.data !== null &&
    typeof entry.data === 'object'
  ) {
    return { ...(entry as Omit<NewEvent, 'id'>), id }
  }
  if (
    entry.type === 'events.lost' &&
    typeof entry.lost === 'number' &&
    typeof entry.occurredAt === 'string'
  ) {
    return { id, type: 'events.lost', lost: entry.lost, occurredAt: entry.occurredAt }
  }
  return undefined
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms).unref())

/**
 * The event log in a Redis stream, shared by every replica (docs/api.md#events):
 * each event is appended with XADD, which gives it its id, and trimmed to the
 * window (MAXLEN and MINID). Every replica reads the stream on a connection of
 * its own (XREAD BLOCK from the last id it read) and hands each entry to its
 * subscribers in stream order, its own events included, so that the order a
 * reader sees is the order of the ids it resumes from.
 *
 * An event published while Redis does not answer waits in a queue of this
 * replica (at most maxEntries - 1; past that the oldest are dropped and counted),
 * appended in order once Redis answers again, after an `events.lost` entry
 * when some were dropped. A replica that stops with events still queued logs
 * how many were lost (error level).
 */
export function createRedisEventLog (options: RedisEventLogOptions): EventLog {
  const { connection, clock, windowMs, maxEntries, blockMs = 1000 } = options
  const ackTimeoutMs = options.replicaAckTimeoutMs ?? 0
  const { scripts, log } = connection
  const listeners = new Set<(entry: LogEntry) => void>()
  /** Events waiting to be appended, each with the token that makes its append happen once. */
  const queue: Array<{ event: NewEvent, token: string }> = []
  let dropped = 0
  /** The token of the `events.lost` entry waiting to be appended, while one does. */
  let lostToken = randomUUID()
  let closed = false
  /** The last id handed to the subscribers. */
  let position = FIRST_POSITION
  /** Where the next read starts; undefined until known (the end of the stream at start-up). */
  let readFrom: string | undefined
  let chain: Promise<void> = Promise.resolve()

  function deliver (entry: LogEntry) {
    position = entry.id
    for (const listener of listeners) {
      try {
        listener(entry)
      } catch (error) {
        log.error({ err: error, eventId: entry.id }, 'event listener failed')
      }
    }
  }

  // An append that timed out may have been applied: retried with the same token, it is not
  // applied twice. While a replica in sync has just left the master (a failover promoting it),
  // the master refuses it and the event waits for the new master.
  const append = (entry: NewEvent | Omit<EventsLost, 'id'>, token: string) => {
    const minId = `${Math.max(0, clock() - windowMs)}-0`
    return scripts.eventsAppend(EVENTS_KEY, `${APPENDED_PREFIX}${token}`, maxEntries,
      minId, JSON.stringify(entry), VERSION, windowMs, connection.replicas(), token)
  }

  // An event appended but not acknowledged by every replica in sync could be missing from a
  // new master: it goes back to the front of the queue, and is appended again with its token
  // when the queue is flushed next (the same master finds the token and answers the same id; a
  // new master that lost it appends it anew, and readers that had the first copy skip it). The
  // wait is not the queue's: the next events go on meanwhile.
  function confirm (item: { event: NewEvent, token: string }) {
    connection.replicated(ackTimeoutMs).catch(() => {
      if (closed) return
      queue.unshift(item)
      log.warn({ waiting: queue.length }, 'events: an append the Redis replicas did not ' +
        'acknowledge in time waits to be appended again')
    })
  }

  /** Appends what waits, in order, while Redis answers. */
  async function drain () {
    while (queue.length > 0 || dropped > 0) {
      if (connection.health() === 'down') return
      try {
        if (dropped > 0) {
          await append(
            { type: 'events.lost', lost: dropped, occurredAt: new Date(clock()).toISOString() },
            lostToken
          )
          log.error(
            { lost: dropped },
            'events: lost while Redis was unreachable (more than EVENTS_REPLAY_MAX waited); ' +
            'readers are told to reload'
          )
          dropped = 0
          lostToken = randomUUID()
        } else {
          await append(queue[0]!.event, queue[0]!.token)
          confirm(queue.shift()!)
        }
      } catch (error) {
        log.warn(
          { reason: redisReason(error), waiting: queue.length },
          'events: appending to Redis failed; the events wait for it'
        )
        return
      }
    }
  }
  const flush = () => (chain = chain.then(drain))

  const stopWatching = connection.onHealthChange((health) => {
    if (health === 'up') flush().catch(() => {})
  })
  // Redis may answer PINGs and still refuse appends (out of memory, a changed ACL): try again every
  // second.
  const retry = setInterval(() => {
    if (queue.length > 0 || dropped > 0) flush().catch(() => {})
  }, 1000)
  retry.unref()

  const reader: Redis = connection.reader(blockMs)
  // The log's reads of the stream run on the reader's connection, functions included.
  const readerScripts = createGatewayScripts(reader, log)
  /**
   * Where to read from after (re)connecting: from the end at start-up; from
   * the last id read while the stream still holds it (after a failover to a
   * replica in sync, the new master holds it). A stream that no longer holds
   * it, though the window never moved past it, lost its last entries (Redis
   * restarted without its data, or a failover to a replica behind): every
   * entry after the last one it still holds is new to this replica. A replica
   * that fell behind the window (cut off from Redis longer than it lasts
   * while others published) cannot know what its readers missed: it tells
   * them with an `events.lost` entry of its own (`lost` 0: unknown), just
   * before what the stream holds.
   */
  async function startFrom (): Promise<string> {
    if (readFrom === undefined) {
      const [last] = await reader.xrevrange(EVENTS_KEY, '+', '-', 'COUNT', 1)
      return last?.[0] ?? FIRST_POSITION
    }
    if (readFrom === FIRST_POSITION) return readFrom
    if (await readerScripts.eventsSince(EVENTS_KEY, readFrom, 1) !== null) return readFrom
    if (!await trimmedPast(readFrom)) {
      const [held] = await reader.xrevrange(EVENTS_KEY, readFrom, '-', 'COUNT', 1)
      log.warn({ eventId: readFrom }, 'events: the stream lost its last entries (Redis restarted ' +
        'without its data, or failed over to a replica behind); reading on after those it holds')
      return held?.[0] ?? FIRST_POSITION
    }
    const [first] = await reader.xrange(EVENTS_KEY, '-', '+', 'COUNT', 1)
    const before = first === undefined ? FIRST_POSITION : previousEventId(first[0])
    log.error('events: this replica fell behind the window; its readers are told to reload')
    deliver({
      id: before,
      type: 'events.lost',
      lost: 0,
      occurredAt: new Date(clock()).toISOString()
    })
    return before
  }

  /** Whether the stream has dropped entries at or after `id` (trimmed to the window). */
  async function trimmedPast (id: string): Promise<boolean> {
    if (await reader.exists(EVENTS_KEY) === 0) return false
    const info = await reader.xinfo('STREAM', EVENTS_KEY) as unknown[]
    const at = info.indexOf('max-deleted-entry-id')
    // Not said (a Redis before 7.0): taken as trimmed, so readers are told rather than not.
    if (at < 0) return true
    const deleted = String(info[at + 1])
    return deleted !== FIRST_POSITION && compareEventIds(deleted, id) >= 0
  }

  /** The tokens of the entries delivered, the newest maxEntries (a Map keeps their order). */
  const delivered = new Map<string, string>()
  function firstTime (token: string | undefined, id: string): boolean {
    if (token === undefined) return true
    if (delivered.has(token)) return false
    delivered.set(token, id)
    if (delivered.size > maxEntries) delivered.delete(delivered.keys().next().value!)
    return true
  }

  // A reader that resumes is replayed what the stream holds after its id, then handed what this
  // replica reads on. Until the first read has found where it starts (the end of the stream, at
  // start-up), an event appended between the replay and that moment would be in neither: a replay
  // waits for it.
  let positioned!: () => void
  const whenPositioned = new Promise<void>(resolve => { positioned = resolve })

  const state = { closed: false }
  async function read () {
    let timeouts = 0
    let known = false
    while (!state.closed) {
      if (reader.status !== 'ready') {
        known = false
        await sleep(50)
        continue
      }
      try {
        if (!known) {
          readFrom = await startFrom()
          known = true
          positioned()
        }
        const reply = (await reader.xread(
          'COUNT',
          READ_COUNT,
          'BLOCK',
          blockMs,
          'STREAMS',
          EVENTS_KEY,
          readFrom!
        )) as Array<[string, Array<[string, string[]]>]> | null
        timeouts = 0
        for (const [, entries] of reply ?? []) {
          for (const [id, fields] of entries) {
            readFrom = id
            // Appended again after a failover lost it: its subscribers have it already.
            if (!firstTime(tokenOf(fields), id)) continue
            const entry = decode(id, fields)
            if (entry === undefined) {
              log.warn({ eventId: id }, 'events: skipped an entry this ' +
              'version cannot read')
            } else deliver(entry)
          }
        }
      } catch (error) {
        if (state.closed) return
        known = false
        if (++timeouts >= STALE_AFTER_TIMEOUTS) {
          timeouts = 0
          log.warn(
            { reason: redisReason(error) },
            "events: reads keep failing; reopening the reader's connection"
          )
          reader.disconnect(true)
        }
        await sleep(100)
      }
    }
  }
  const reading = read()

  return {
    async publish (event) {
      if (closed) {
        log.error(
          { requestId: event.requestId },
          'events: published after the log was closed; lost'
        )
        return
      }
      queue.push({ event, token: randomUUID() })
      // One place fewer than the window: with the events.lost entry in front, all of them fit in
      // it.
      if (queue.length > Math.max(1, maxEntries - 1)) {
        queue.shift()
        dropped++
      }
      if (connection.health() === 'down') {
        log.debug({ waiting: queue.length }, 'events: Redis down, the event waits for it')
        return
      }
      await flush()
    },
    subscribe (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    async since (id) {
      if (connection.health() === 'down') return { state: 'unavailable' }
      const waited = await Promise.race([
        whenPositioned.then(() => true),
        sleep(connection.commandTimeoutMs).then(() => false)
      ])
      if (!waited) return { state: 'unavailable' }
      try {
        const entries = await scripts.eventsSince(EVENTS_KEY, id, maxEntries)
        if (entries === null) return { state: 'expired' }
        const decoded: LogEntry[] = []
        for (const [entryId, fields] of entries) {
          // Appended again after a failover lost its first copy, which a reader at `id` had.
          const token = tokenOf(fields)
          const first = token === undefined ? undefined : delivered.get(token)
          if (first !== undefined && first !== entryId && compareEventIds(first, id) <= 0) continue
          const entry = decode(entryId, fields)
          if (entry !== undefined) decoded.push(entry)
        }
        return { state: 'replayed', entries: decoded }
      } catch (error) {
        log.warn({ reason: redisReason(error) }, 'events: reading the log failed')
        return { state: 'unavailable' }
      }
    },
    position: () => position,
    async close () {
      if (closed) return
      closed = true
      state.closed = true
      listeners.clear()
      stopWatching()
      clearInterval(retry)
      await flush()
      if (queue.length > 0 || dropped > 0) {
        log.error(
          { lost: queue.length + dropped },
          'events: the gateway stopped while Redis was unreachable; the events waiting for it ' +
          'are lost'
        )
      }
      reader.disconnect()
      await reading
    }
  }
}
