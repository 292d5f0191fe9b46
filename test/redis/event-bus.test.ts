import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { test } from 'tap'
import { createRedisEventBus } from '../../src/state/redis/event-bus.ts'
import type { EventBus, GatewayEvent } from '../../src/state/types.ts'
import { connect, startRedisServer, until, type LogLines, type RedisServer } from './redis-server.ts'

type Test = Parameters<Parameters<typeof test>[0]>[0]

function event (note: string): GatewayEvent {
  return {
    id: randomUUID(),
    type: 'booking.booked',
    occurredAt: new Date().toISOString(),
    requestId: `req-${note}`,
    client: 'yard-app',
    data: { bookingRequestId: 'BKG-1', booked: true, note }
  }
}

/** What one subscriber received, by note. */
function recorder (bus: EventBus) {
  const notes: string[] = []
  bus.subscribe(received => notes.push(String(received.data.note)))
  return notes
}

/** Subscribers of the events channel, as Redis counts them. */
async function subscribers (raw: Redis): Promise<number> {
  const [, count] = await raw.pubsub('NUMSUB', 'test:events') as [string, number]
  return count
}

async function replicas (t: Test, server?: RedisServer) {
  server ??= await startRedisServer(t)
  const logs: LogLines = []
  const [ca, cb] = await Promise.all([connect(t, server, { logs }), connect(t, server)])
  const a = createRedisEventBus({ connection: ca })
  const b = createRedisEventBus({ connection: cb })
  t.teardown(() => Promise.all([a.close(), b.close()]))
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  await until(async () => await subscribers(raw) === 2, 3000, 'both replicas subscribed')
  return { server, raw, logs, a, b }
}

test('an event published on A reaches every subscriber on A and on B exactly once', async (t) => {
  const { a, b } = await replicas(t)
  const [a1, a2, b1] = [recorder(a), recorder(a), recorder(b)]
  await a.publish(event('one'))
  t.same([a1, a2], [['one'], ['one']], "A's subscribers have it when publish() returns")
  await a.publish(event('two'))
  await until(() => b1.length === 2, 2000, 'B received both')
  // B answers; once A has B's event, A has seen its own two come back from Redis before it.
  await b.publish(event('from B'))
  await until(() => a1.length === 3, 2000, "A received B's")
  t.same(a1, ['one', 'two', 'from B'], 'A: each once, its own not again from Redis')
  t.same(a2, ['one', 'two', 'from B'])
  t.same(b1, ['one', 'two', 'from B'], 'B: each once')
})

test('the event arrives as published: id, type, times, request id, client and data', async (t) => {
  const { a, b } = await replicas(t)
  const received: GatewayEvent[] = []
  b.subscribe(e => received.push(e))
  const sent = { ...event('whole'), client: null }
  await a.publish(sent)
  await until(() => received.length === 1, 2000, 'received')
  t.same(received[0], sent)
})

test('with Redis stopped, local subscribers still get each event; after the restart delivery between replicas resumes by itself', async (t) => {
  const { server, raw, a, b } = await replicas(t)
  const [a1, b1] = [recorder(a), recorder(b)]
  await server.stop()
  const started = performance.now()
  await a.publish(event('during the outage'))
  t.ok(performance.now() - started < 50, `publish() does not wait (${Math.round(performance.now() - started)} ms)`)
  t.same(a1, ['during the outage'], 'delivered in A')

  await server.start()
  await until(async () => await subscribers(raw).catch(() => 0) === 2, 5000, 'both replicas subscribed again')
  await a.publish(event('after'))
  await until(() => b1.length > 0, 2000, 'B receives again')
  await b.publish(event('from B'))
  await until(() => a1.length === 3, 2000, "A received B's")
  t.same(a1, ['during the outage', 'after', 'from B'], 'A: each once')
  t.same(b1, ['after', 'from B'], 'B: what was published while it could hear it, once (pub/sub keeps nothing)')
})

test('unsubscribe and close() stop delivery; close() unsubscribes from Redis', async (t) => {
  const { a, b, raw } = await replicas(t)
  const kept = recorder(b)
  const dropped: string[] = []
  const unsubscribe = b.subscribe(e => dropped.push(String(e.data.note)))
  unsubscribe()
  await a.publish(event('one'))
  await until(() => kept.length === 1, 2000, 'received')
  t.same(dropped, [])
  await b.close()
  t.equal(await subscribers(raw), 1, "only A's subscription is left")
})

test('a subscriber that throws does not keep the event from the others', async (t) => {
  const { a, logs } = await replicas(t)
  a.subscribe(() => { throw new Error('a broken socket') })
  const after = recorder(a)
  await a.publish(event('one'))
  t.same(after, ['one'])
  t.ok(logs.some(line => line.msg === 'event listener failed'), 'the failure is logged')
})

test('messages of another format on the channel are skipped', async (t) => {
  const { a, b, raw } = await replicas(t)
  const b1 = recorder(b)
  for (const message of ['not json', 'null', '{"v":2,"origin":"x","event":{"id":"1","type":"booking.booked"}}', '{"v":1,"origin":"x","event":{"type":"other"}}']) {
    await raw.publish('test:events', message)
  }
  await a.publish(event('valid'))
  await until(() => b1.length === 1, 2000, 'received')
  t.same(b1, ['valid'], 'only the valid one, after the others were skipped')
})
