import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import pino from 'pino'
import { test } from 'tap'
import { createRedisIdempotencyStore } from '../../../src/state/redis/idempotency.ts'
import { createRedisLookupTier } from '../../../src/state/redis/lookup-tier.ts'
import { createRedisTokenStore } from '../../../src/state/redis/token-store.ts'
import { SANDBOX_FIXTURES } from '../../../src/sandbox/index.ts'
import { acquire, build } from '../../helpers/helper.ts'
import { connect, startRedisServer, type LogLines } from '../../helpers/redis-server.ts'

// ioredis attaches the failed command to a Redis error, its arguments included:
// the values written (a session token, a stored answer, a lookup answer), which
// pino's error serializer would print.
test('no value written to Redis reaches a log line when Redis refuses the write (a full ' +
  'Redis)', async (t) => {
  const server = await startRedisServer(t)
  const logs: LogLines = []
  const connection = await connect(t, server, { logs })
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  const full = () => raw.config('SET', 'maxmemory', '1')

  const idempotency = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 300 })
  const claim = await acquire(idempotency, 'key', 'fp')
  const tokens = createRedisTokenStore({ connection, lockTtlMs: 2000 })
  // Redis fills up during the login: storing its session fails.
  const session = await tokens.renew('Bearer rejected-5e1f', async () => {
    await full()
    return { authorization: 'Bearer fresh-9a7c', expiresAt: Date.now() + 60_000 }
  })
  t.equal(session.authorization, 'Bearer fresh-9a7c')
  // Full from the start: the lock script fails.
  t.equal(
    (
      await tokens.renew('Bearer rejected-5e1f', async () => ({
        authorization: 'Bearer other-3b2d',
        expiresAt: Date.now() + 60_000
      }))
    ).authorization,
    'Bearer other-3b2d'
  )
  await claim.complete({ statusCode: 200, headers: {}, body: '{"data":{"note":"answer-77d1"}}' })
  const now = Date.now()
  await createRedisLookupTier({ connection, maxEntryBytes: 1024 }).set('lookup', {
    json: Buffer.from('[{"npwp":"lookup-40c8"}]'),
    count: 1,
    upstreamStatus: 200,
    fetchedAt: now,
    expiresAt: now + 1000,
    staleUntil: now + 2000
  })

  // What begin() throws carries the reason only: a caller logging it prints no command either.
  t.equal(
    connection.health(),
    'refusing-writes',
    'the refusals were noted: this connection tries no claim'
  )
  const unaware = await connect(t, server, { logs, healthCheckIntervalMs: 60_000 })
  const refused = await createRedisIdempotencyStore({
    connection: unaware,
    ttlMs: 60_000,
    claimTtlMs: 300
  })
    .begin('another', 'fp')
    .catch((error: unknown) => error)
  t.match(refused, { code: 'STATE_UNAVAILABLE', cause: { message: /OOM command not allowed/ } })
  t.notOk(
    JSON.stringify(pino.stdSerializers.err(refused as Error)).includes('"args"'),
    'no command arguments in the error'
  )

  const text = JSON.stringify(logs)
  t.match(text, /OOM command not allowed/, 'the failures are logged, with their reason')
  t.notMatch(text, '"args"', 'with no command arguments (a Buffer value would show as bytes)')
  for (const secret of [
    'rejected-5e1f',
    'fresh-9a7c',
    'other-3b2d',
    'answer-77d1',
    'lookup-40c8'
  ]) {
    t.notMatch(text, secret, `${secret} is not in the logs`)
  }
})

// REDIS_URL_FILE holding the address with its password: what a Secret mounted as a file gives
// (the one way to give the password).
test('REDIS_URL_FILE with the password: let in as its user, the password in no log', async (t) => {
  const password = 'p@ss:w/rd %x-71c3'
  const server = await startRedisServer(t, { user: { name: 'gateway', password } })
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-secret-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'redis-url')
  const address = (secret: string) =>
    `redis://gateway:${encodeURIComponent(secret)}@127.0.0.1:${server.port}`
  writeFileSync(file, `${address(password)}\n`)
  const env = { REDIS_URL_FILE: file, REDIS_KEY_PREFIX: 'test:' }
  const { app, rawLogs } = await build(t, { env })
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.json().data.redis, 'up', 'authenticated with the password of the file\'s address')
  t.equal(
    (
      await app.inject({
        url: `/v1/customs/bc20/bills-of-lading?npwp=${SANDBOX_FIXTURES.taxpayer.npwp}`
      })
    ).statusCode,
    200
  )
  // A careless log of the whole configuration.
  app.log.info({ config: app.config }, 'careless')
  const text = rawLogs.join('\n')
  t.match(text, 'careless')
  for (const form of [password, encodeURIComponent(password)]) {
    t.notMatch(text, form, 'the password, as written and as in the URL, is in no log line')
  }

  // The wrong password: Redis refuses it, and the gateway says so without it.
  writeFileSync(file, `${address('not-the-password')}\n`)
  const wrong = await build(t, { env })
  t.equal(
    (await wrong.app.inject({ url: '/health/ready' })).json().data.redis,
    'down',
    'refused by Redis'
  )
  t.notMatch(wrong.rawLogs.join('\n'), 'not-the-password')
})
