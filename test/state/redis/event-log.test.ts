import { Redis } from 'ioredis'
import { test } from 'tap'
import { createRedisEventLog } from '../../../src/state/redis/event-log.ts'
import { createRedisTicketStore } from '../../../src/state/redis/ticket-store.ts'
import type { EventLog, LogEntry, NewEvent } from '../../../src/state/types.ts'
import {
  connect, startFailoverSet, startRedisServer, TEST_TIMEOUTS, until, type LogLines,
  type RedisServer
} from '../../helpers/redis-server.ts'

type Test = Parameters<Parameters<typeof test>[0]>[0]

const KEY = 'test:events:log'

function event (note: string): NewEvent {
  return {
    type: 'booking.booked',
    occurredAt: new Date().toISOString(),
    requestId: `req-${note}`,
    client: 'yard-app',
    data: { bookingRequestId: 'BKG-1', booked: true, note }
  }
}

const noteOf = (entry: LogEntry) =>
  entry.type === 'booking.booked' ? String(entry.data.note) : `lost ${entry.lost}`

/** An entry's event, as the stream holds it (`e`, the event's JSON). */
function decodeEntry (fields: string[]): LogEntry {
  return JSON.parse(fields[fields.indexOf('e') + 1] ?? '{}') as LogEntry
}

/** What one subscriber received, by note, and the entries. */
function recorder (log: EventLog) {
  const entries: LogEntry[] = []
  log.subscribe(received => entries.push(received))
  return { entries, notes: () => entries.map(noteOf), ids: () => entries.map(e => e.id) }
}

async function replicas (t: Test,
  options: { server?: RedisServer, maxEntries?: number, windowMs?: number } = {}, blockMs = 200) {
  const server = options.server ?? await startRedisServer(t)
  const logs: LogLines = []
  const [ca, cb] = await Promise.all([connect(t, server, { logs }), connect(t, server)])
  const window = { windowMs: options.windowMs ?? 60_000, maxEntries: options.maxEntries ?? 100 }
  const a = createRedisEventLog({ connection: ca, clock: Date.now, blockMs, ...window })
  const b = createRedisEventLog({ connection: cb, clock: Date.now, blockMs, ...window })
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  // Both readers are blocked on the stream once Redis counts two blocked clients.
  await until(
    async () => /blocked_clients:2/.test(await raw.info('clients')),
    3000,
    'both replicas reading'
  )
  return { server, raw, logs, a, b, ca, cb }
}

test('an event published on A reaches every subscriber on A and on B once, in the same ' +
  "order, under the stream's id", async (t) => {
  // Reads block for 10 s: a reader that saw an entry only when its block ended would take that.
  const { a, b, raw } = await replicas(t, {}, 10_000)
  const [a1, a2, b1] = [recorder(a), recorder(a), recorder(b)]
  const latencies: number[] = []
  b.subscribe(() => latencies.push(performance.now() - sentAt))
  let sentAt = 0
  for (const note of ['one', 'two']) {
    sentAt = performance.now()
    await a.publish(event(note))
    await until(
      () => b1.entries.length === latencies.length && latencies.length === (note === 'one' ? 1 : 2),
      2000,
      `B has ${note}`
    )
  }
  await b.publish(event('from B'))
  await until(() => a1.entries.length === 3 && b1.entries.length === 3, 2000, 'all three on both')
  t.same(a1.notes(), ['one', 'two', 'from B'], 'A: each once, its own too, in stream order')
  t.same(a2.notes(), a1.notes())
  t.same(b1.notes(), a1.notes(), 'B: the same')
  t.same(b1.ids(), a1.ids(), 'the same ids on both')
  const stream = await raw.xrange(KEY, '-', '+')
  t.same(
    stream.map(([id]) => id),
    a1.ids(),
    "the ids are the stream's"
  )
  t.equal(a.position(), a1.ids()[2])
  t.comment(
    `publish on A to a subscriber on B: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`
  )
  t.ok(
    latencies.every((ms) => ms < 5000),
    "delivered across replicas before the read's block ends (XREAD BLOCK wakes on XADD)"
  )
})

test('the event arrives as published: type, times, request id, client and data', async (t) => {
  const { a, b } = await replicas(t)
  const received = recorder(b)
  const sent = { ...event('whole'), client: null }
  await a.publish(sent)
  await until(() => received.entries.length === 1, 2000, 'received')
  const { id, ...rest } = received.entries[0]!
  t.same(rest, sent)
  t.match(id, /^\d+-\d+$/)
})

test('since(): what follows an id on any replica, within EVENTS_REPLAY_MAX; expired past it or ' +
  'for an id the stream never held', async (t) => {
  const { a, b } = await replicas(t, { maxEntries: 3 })
  const seen = recorder(b)
  for (const note of ['1', '2', '3']) await a.publish(event(note))
  await until(() => seen.entries.length === 3, 2000, 'three')
  const [first, second] = seen.ids()
  const after = async (log: EventLog, id: string) => {
    const r = await log.since(id)
    return r.state === 'replayed' ? r.entries.map(noteOf) : r.state
  }
  t.same(await after(b, '0-0'), ['1', '2', '3'], 'nothing trimmed yet: everything from 0-0')
  t.same(await after(b, first!), ['2', '3'], 'after an id published on A, read on B')
  t.same(await after(a, seen.ids()[2]!), [], 'at the end')
  await a.publish(event('4'))
  t.equal(await after(b, first!), 'expired', 'trimmed to the last 3: the first is gone')
  t.equal(await after(b, '0-0'), 'expired', 'and 0-0 no longer reaches back to the start')
  t.same(await after(b, second!), ['3', '4'])
  t.equal(await after(b, '1-0'), 'expired', 'an id the stream never held')
})

test('EVENTS_REPLAY_SECONDS: entries older than the window are trimmed when the next is ' +
  'appended', async (t) => {
  const { a, b } = await replicas(t, { windowMs: 300 })
  const seen = recorder(b)
  await a.publish(event('old'))
  await until(() => seen.entries.length === 1, 2000, 'one')
  await new Promise((resolve) => setTimeout(resolve, 400))
  await a.publish(event('new'))
  t.equal((await b.since(seen.ids()[0]!)).state, 'expired')
})

test('with Redis stopped, publish() does not wait; the events reach every replica in order once ' +
  'it is back, under new ids', async (t) => {
  const { server, a, b } = await replicas(t)
  const [a1, b1] = [recorder(a), recorder(b)]
  await a.publish(event('before'))
  await until(() => b1.entries.length === 1, 2000, 'before')
  await server.stop()
  await until(() => a.position() !== '' && b1.entries.length === 1, 100)
  const started = performance.now()
  await a.publish(event('during 1'))
  await b.publish(event('during B'))
  await a.publish(event('during 2'))
  const took = performance.now() - started
  // Three publishes: a margin of seconds for a loaded machine, less than three timeouts.
  t.ok(took < TEST_TIMEOUTS.commandTimeoutMs + 2000,
    `publish() waits the command timeout at most (${Math.round(took)} ms)`)
  t.same(a1.notes(), ['before'], 'nothing is delivered before it has its place in the stream')

  await server.start()
  await until(
    () => a1.entries.length === 4 && b1.entries.length === 4,
    10_000,
    'all on both after the restart'
  )
  t.same(a1.notes().slice(0, 1), ['before'])
  t.same(new Set(a1.notes().slice(1)), new Set(['during 1', 'during B', 'during 2']), 'each once')
  t.ok(
    a1.notes().indexOf('during 1') < a1.notes().indexOf('during 2'),
    "each replica's in the order it published them"
  )
  t.same(b1.notes(), a1.notes(), 'the same order on both')
  t.same(b1.ids(), a1.ids())
})

test('an append Redis applied after the gateway gave up on it (a frozen Redis) is not ' +
  'applied again when it is retried: one entry, once on every replica', async (t) => {
  const { server, raw, a, b, logs } = await replicas(t)
  const [a1, b1] = [recorder(a), recorder(b)]
  server.pause()
  // Redis is frozen: the append times out (it sits in Redis's input, and runs when it wakes), and
  // waits to be retried.
  await a.publish(event('frozen'))
  const failed = 'events: appending to Redis failed; the events wait for it'
  await until(() => logs.some((line) => line.msg === failed), 10_000, 'the append timed out')
  server.resume()
  await until(() => a1.entries.length >= 1 && b1.entries.length >= 1, 10_000, 'the event on both')
  await new Promise((resolve) => setTimeout(resolve, 1500)) // the retries that were waiting run
  t.equal(await raw.xlen(KEY), 1, 'one entry in the stream')
  t.same(a1.notes(), ['frozen'], 'once on A')
  t.same(b1.notes(), ['frozen'], 'once on B')
})

test('more events during an outage than a replica holds: the oldest are lost, and every reader ' +
  'gets an events.lost entry first', async (t) => {
  const { server, a, b, logs } = await replicas(t, { maxEntries: 3 })
  const [a1, b1] = [recorder(a), recorder(b)]
  await server.stop()
  await until(() => true, 10)
  for (const note of ['1', '2', '3', '4', '5']) await a.publish(event(note))
  await server.start()
  await until(
    () => a1.entries.length === 3 && b1.entries.length === 3,
    10_000,
    'the marker and the two kept'
  )
  t.same(b1.notes(), ['lost 3', '4', '5'])
  t.same(a1.notes(), b1.notes())
  t.ok(
    logs.some(
      (line) => line.level === 50 && /lost while Redis was unreachable/.test(String(line.msg))
    ),
    'logged as an error'
  )
})

test('Redis restarted without its data: each replica reads the new stream from its start, and an ' +
  'old id is expired', async (t) => {
  const { server, a, b } = await replicas(t)
  const b1 = recorder(b)
  await a.publish(event('old'))
  await until(() => b1.entries.length === 1, 2000, 'old')
  const oldId = b1.ids()[0]!
  await server.stop()
  await server.start()
  await until(() => a.position() !== '', 10)
  // Published once A's command connection is back; the readers reconnect on their own.
  await until(async () => {
    await a.publish(event('new'))
    return true
  }, 5000)
  await until(() => b1.entries.length >= 2, 10_000, 'the new one on B')
  t.same(b1.notes().slice(0, 2), ['old', 'new'])
  // B's reader is back; its command connection may still be reconnecting (then: unavailable).
  let state = ''
  await until(async () => {
    state = (await b.since(oldId)).state
    return state !== 'unavailable'
  }, 5000, 'B answers since()')
  t.equal(state, 'expired', 'the old history is gone: a reader from before is told to reload')
})

test('an event appended again under its token (a failover lost it) arrives once', async (t) => {
  const { a, b, raw } = await replicas(t)
  const [onA, onB] = [recorder(a), recorder(b)]
  await a.publish(event('once'))
  await until(() => onA.entries.length === 1 && onB.entries.length === 1, 2000, 'delivered')
  const [firstId, fields] = (await raw.xrange(KEY, '-', '+'))[0] ?? ['', []]
  // What a new master holds once the publisher appended it again: the same fields, a new id.
  await raw.xadd(KEY, '*', ...fields)
  await a.publish(event('next'))
  await until(() => onA.entries.length === 2 && onB.entries.length === 2, 2000, 'the next one')
  t.same(onA.notes(), ['once', 'next'], 'A: once')
  t.same(onB.notes(), ['once', 'next'], 'B: once')
  const since = await b.since(firstId)
  const replayed = since.state === 'replayed' && since.entries.map(noteOf)
  t.same(replayed, ['next'], 'not replayed to a reader at it')
})

test('a Sentinel failover to a replica in sync loses no event and repeats none', async (t) => {
  // As the fault suite's servers run: writes refused without a replica in sync, no sync delay.
  const set = await startFailoverSet(t, ['--min-replicas-to-write', '1',
    '--min-replicas-max-lag', '5', '--repl-diskless-sync-delay', '0'])
  const logs: LogLines = []
  const connection = await set.connect({ logs })
  const settings = { windowMs: 60_000, maxEntries: 1000, replicaAckTimeoutMs: 100 }
  const log = createRedisEventLog({ connection, clock: Date.now, ...settings })
  t.teardown(() => log.close())
  const received = recorder(log)
  await until(() => connection.replicas() === 2, 10_000, 'both replicas counted')
  const onOld = new Redis(set.master.url)
  t.teardown(() => onOld.disconnect())
  await until(async () => /blocked_clients:1/.test(await onOld.info('clients')), 5000, 'reading')

  // A steady publisher across the failover, as the write routes are.
  const published: string[] = []
  const publishing = { on: true }
  const publisher = (async () => {
    while (publishing.on) {
      const note = `n${published.length}`
      published.push(note)
      await log.publish(event(note))
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  })()
  await until(() => received.entries.length >= 20, 5000, 'events before')
  const before = received.ids().at(-1)!
  await set.sentinel.command('SENTINEL', 'FAILOVER', 'mymaster')
  await until(async () => await set.named() !== set.master, 15_000, 'a replica promoted')
  const promotedAt = published.length
  await until(() => received.entries.length >= promotedAt + 20, 15_000, 'events after it')
  publishing.on = false
  await publisher
  await until(() => received.entries.length >= published.length, 10_000, 'every event delivered')

  t.same(received.notes(), published, 'each event once, in order')
  const onNew = new Redis((await set.named()).url)
  t.teardown(() => onNew.disconnect())
  // By note: one the old master took as the promoted replica left it is appended again.
  const entries = await onNew.xrange(KEY, '-', '+')
  const held = new Set(entries.map(([, fields]) => noteOf(decodeEntry(fields))))
  t.same(published.filter(note => !held.has(note)), [], 'the new master holds every one')
  const since = await log.since(before)
  t.equal(since.state, 'replayed', 'a reader resuming from before is not told to reload')
  t.notOk(logs.some(line => /fell behind/.test(String(line.msg))), 'no reload for its readers')
})

test('an entry of another format is skipped; a subscriber that throws does not keep the entry ' +
  'from the others', async (t) => {
  const { a, b, raw, logs } = await replicas(t)
  const b1 = recorder(b)
  await raw.xadd(KEY, '*', 'v', '2', 'e', '{}')
  await raw.xadd(KEY, '*', 'v', '1', 'e', 'not json')
  await raw.xadd(KEY, '*', 'v', '1', 'e', '{"type":"other"}')
  a.subscribe(() => {
    throw new Error('a broken socket')
  })
  const after = recorder(a)
  await a.publish(event('valid'))
  await until(() => b1.entries.length === 1 && after.entries.length === 1, 2000, 'received')
  t.same(b1.notes(), ['valid'])
  t.ok(
    logs.some((line) => line.msg === 'event listener failed'),
    'the failure is logged'
  )
  t.ok(logs.some((line) => line.msg === 'events: skipped an entry this version cannot read'))
})

test('closing with events still waiting for Redis logs how many are lost', async (t) => {
  const { server, a, logs } = await replicas(t)
  await server.stop()
  await a.publish(event('1'))
  await a.publish(event('2'))
  await a.close()
  t.ok(
    logs.some(
      (line) =>
        line.level === 50 &&
        line.lost === 2 &&
        /stopped while Redis was unreachable/.test(String(line.msg))
    )
  )
})

test('tickets: issued on A, redeemed on B once; unavailable while Redis is down', async (t) => {
  const { ca, cb, server } = await replicas(t)
  const [ta, tb] = [
    createRedisTicketStore({ connection: ca }),
    createRedisTicketStore({ connection: cb })
  ]
  await ta.issue('ticket-1', 'yard-a', 5000)
  await ta.issue('ticket-2', null, 5000)
  t.same(await tb.redeem('ticket-1'), { client: 'yard-a' })
  t.same(await ta.redeem('ticket-1'), undefined, 'once, on any replica')
  t.same(await tb.redeem('ticket-2'), { client: null })
  await ta.issue('ticket-3', 'yard-a', 50)
  await new Promise(resolve => setTimeout(resolve, 100))
  t.same(await tb.redeem('ticket-3'), undefined, 'expired')
  await server.stop()
  await until(() => ca.health() === 'down', 2000, 'down')
  await t.rejects(ta.issue('ticket-4', 'yard-a', 5000), { code: 'STATE_UNAVAILABLE' })
  await t.rejects(ta.redeem('ticket-4'), { code: 'STATE_UNAVAILABLE' })
})

test('a reader resuming on a replica that has just started misses no event appended while ' +
  'that replica finds where its own reading starts', async (t) => {
  const { server, a } = await replicas(t)
  await a.publish(event('before'))
  const from = a.position()
  // A replica starting now: its reading starts at the end of the stream, found on a connection
  // of its own, which takes a few round trips. A reader resumes on it at once.
  const connection = await connect(t, server)
  const starting = createRedisEventLog({
    connection, clock: Date.now, blockMs: 200, windowMs: 60_000, maxEntries: 100
  })
  t.teardown(() => starting.close())
  const live = recorder(starting)
  const replay = await starting.since(from)
  // Appended after the replay's read: this replica's own reading must hand it on.
  await a.publish(event('after the replay'))
  t.equal(replay.state, 'replayed')
  const replayed = replay.state === 'replayed' ? replay.entries.map(noteOf) : []
  await until(() => [...replayed, ...live.notes()].includes('after the replay'), 10_000,
    'the event appended after the replay reached the reader')
  t.notOk(replayed.includes('before'), 'what it had is not replayed')
})
