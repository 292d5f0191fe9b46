import { Redis } from 'ioredis'
import { test } from 'tap'
import { createRedisEventLog } from '../../src/state/redis/event-log.ts'
import { createRedisIdempotencyStore } from '../../src/state/redis/idempotency.ts'
import { createRedisLookupTier } from '../../src/state/redis/lookup-tier.ts'
import { createRedisRateLimitStore } from '../../src/state/redis/rate-limit-store.ts'
import { createRedisTicketStore } from '../../src/state/redis/ticket-store.ts'
import { createRedisTokenStore } from '../../src/state/redis/token-store.ts'
import type { LogEntry } from '../../src/state/types.ts'
import { connect, startRedisServer, until } from './redis-server.ts'

// The ACL rules docs/redis.md gives for the gateway's user, with the tests' prefix.
const RULES = 'resetkeys ~test:* resetchannels -@all +@connection +info +get +set +del +getdel +incr +pexpire +pttl +scan +eval +evalsha +exists +xadd +xtrim +xrange +xrevrange +xread +xinfo +wait'

test('every store works for a user limited to the prefix and the commands docs/redis.md lists', async (t) => {
  const server = await startRedisServer(t, { user: { name: 'gateway', password: 'acl-0d2f', rules: RULES.split(' ') } })
  const [a, b] = await Promise.all([connect(t, server), connect(t, server)])
  // The same user without the key prefix.
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  await t.rejects(raw.get('outside:prefix'), { message: /NOPERM/ }, 'keys outside the prefix are refused')
  await t.rejects(raw.flushall(), { message: /NOPERM/ }, 'and commands not listed')

  const now = Date.now()
  const entry = { json: Buffer.from('[]'), count: 0, upstreamStatus: 200, fetchedAt: now, expiresAt: now + 1000, staleUntil: now + 2000 }
  await createRedisLookupTier({ connection: a, maxEntryBytes: 1024 }).set('k', entry)
  t.same(await createRedisLookupTier({ connection: b, maxEntryBytes: 1024 }).get('k'), entry, 'lookup tier')

  const [ia, ib] = [a, b].map(connection => createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 5000 }))
  t.same(await ia?.begin('key', 'fp'), { state: 'acquired' })
  await ia?.complete('key', { statusCode: 200, headers: {}, body: '{}' })
  t.same(await ib?.begin('key', 'fp'), { state: 'completed', response: { statusCode: 200, headers: {}, body: '{}' } }, 'idempotency')
  await ib?.begin('released', 'fp')
  await ib?.release('released')
  t.equal(await ia?.size(), 1, 'size')
  await ib?.begin('abandoned', 'fp')
  await ib?.abandon('abandoned')
  t.same(await ia?.begin('abandoned', 'fp'), { state: 'unknown' }, 'an outcome kept unknown')
  // What a claim waits for with replicas in sync (none here: 0 acknowledged at once).
  t.equal(await a.client.wait(0, 10), 0, 'WAIT')
  await until(() => a.health() === 'up' && b.health() === 'up', 3000, 'the health check writes its key and reads INFO')

  const Store = createRedisRateLimitStore(a)
  const counted = await new Promise(resolve => new Store({}).incr('client:x', (error, result) => resolve(error ?? result?.current), 60_000, 10))
  t.equal(counted, 1, 'rate limits')

  const [ea, eb] = [a, b].map(connection => createRedisEventLog({ connection, clock: Date.now, windowMs: 60_000, maxEntries: 10, blockMs: 100 }))
  t.teardown(() => Promise.all([ea?.close(), eb?.close()]))
  const received: LogEntry[] = []
  eb?.subscribe(event => received.push(event))
  await until(async () => {
    await ea?.publish({ type: 'booking.booked', occurredAt: new Date().toISOString(), requestId: 'r', client: null, data: {} })
    return received.length > 0
  }, 3000, 'an event from A on B')
  t.same(await eb?.since(received[0]!.id), { state: 'replayed', entries: received.slice(1) }, 'events, and their replay')
  t.equal((await eb?.since('0-0'))?.state, 'replayed')

  const tickets = createRedisTicketStore({ connection: a })
  await tickets.issue('ticket', 'yard', 1000)
  t.same(await createRedisTicketStore({ connection: b }).redeem('ticket'), { client: 'yard' }, 'tickets')

  const tokens = createRedisTokenStore({ connection: a, lockTtlMs: 2000 })
  const session = await tokens.renew(undefined, async () => ({ authorization: 'Bearer t', expiresAt: Date.now() + 60_000 }))
  t.same(await createRedisTokenStore({ connection: b, lockTtlMs: 2000 }).get(), session, 'hub session')
})
