import { Redis } from 'ioredis'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../../src/sandbox/index.ts'
import { createRedisEventLog } from '../../../src/state/redis/event-log.ts'
import {
  FUNCTION_LIBRARY,
  LOAD_HINT,
  loadFunctionLibrary
} from '../../../src/state/redis/functions.ts'
import { createRedisIdempotencyStore } from '../../../src/state/redis/idempotency.ts'
import { createRedisLookupTier } from '../../../src/state/redis/lookup-tier.ts'
import { createRedisRateLimitStore } from '../../../src/state/redis/rate-limit-store.ts'
import { createRedisTicketStore } from '../../../src/state/redis/ticket-store.ts'
import { createRedisTokenStore } from '../../../src/state/redis/token-store.ts'
import type { LogEntry } from '../../../src/state/types.ts'
import { acquire, build } from '../../helpers/helper.ts'
import {
  connect,
  redisUserRules,
  startRedisServer,
  until,
  type RedisServer
} from '../../helpers/redis-server.ts'

/**
 * The gateway under exactly the ACL rules deploy/init-secrets.sh gives its
 * Redis user (deploy/redis-users.rules, read here, with the tests' prefix):
 * every store and the whole gateway work, and what a shared Redis must not
 * let one environment's credentials do is refused.
 */

const PREFIX = 'test:'
const RULES = redisUserRules(PREFIX)
const FUNCTIONS_PASSWORD = 'functions-7c1e'

interface TestLike { teardown (fn: () => unknown): void }

/**
 * A redis-server with the `gateway` user (the server's URL) and the `functions` user of
 * deploy/redis-users.rules.
 */
async function aclServer (t: TestLike): Promise<RedisServer> {
  return await startRedisServer(t, {
    user: { name: 'gateway', password: 'acl-0d2f', rules: (RULES.gateway ?? '').split(' ') },
    // DEBUG allowed by the server, so that it is the ACL that refuses it.
    args: [
      '--enable-debug-command',
      'yes',
      '--user',
      'functions',
      'on',
      `>${FUNCTIONS_PASSWORD}`,
      ...(RULES.functions ?? '').split(' ')
    ]
  })
}

/** A connection as the `functions` user: what the one-shot loader of deploy/compose.yaml sends. */
function functionsUser (t: TestLike, server: RedisServer): Redis {
  const client = new Redis(`redis://functions:${FUNCTIONS_PASSWORD}@127.0.0.1:${server.port}`, {
    enableReadyCheck: false,
    disableClientInfo: true,
    maxRetriesPerRequest: 0
  })
  t.teardown(() => client.disconnect())
  return client
}

test("deploy/redis-users.rules: the gateway's user has FCALL and no command that runs arbitrary " +
  'Lua or reaches beyond its prefix', async (t) => {
  const gateway = RULES.gateway ?? ''
  t.match(
    gateway,
    /^resetkeys ~test:\* resetchannels -@all /,
    'its keys only, no channel, nothing unless listed'
  )
  t.ok(gateway.includes(' +fcall'), 'FCALL of loaded functions')
  for (const command of [
    'eval',
    'evalsha',
    'script',
    'function',
    'client',
    'select',
    'keys',
    'flushall',
    'flushdb',
    'config',
    'debug',
    '@connection',
    '@all',
    '@admin',
    '@dangerous',
    '@scripting'
  ]) {
    t.notOk(
      gateway.split(' ').includes(`+${command}`) || gateway.includes(` +${command}|`),
      `no +${command}`
    )
  }
  t.equal(
    RULES.functions,
    'resetkeys resetchannels -@all +function|list +function|load',
    'the loading user may list and load functions, nothing else'
  )
  t.equal(RULES.default, 'resetkeys resetchannels -@all +ping', 'the default user may PING')
})

test("every store works for the gateway's user, once the functions user has loaded the " +
  'library', async (t) => {
  const server = await aclServer(t)
  t.equal(
    await loadFunctionLibrary(functionsUser(t, server)),
    'loaded',
    'the functions user loads the library'
  )
  t.equal(await loadFunctionLibrary(functionsUser(t, server)), 'present', 'again: left as it is')
  const logs: Array<Record<string, unknown>> = []
  const [a, b] = await Promise.all([connect(t, server, { logs }), connect(t, server)])

  const now = Date.now()
  const entry = {
    json: Buffer.from('[]'),
    count: 0,
    upstreamStatus: 200,
    fetchedAt: now,
    expiresAt: now + 1000,
    staleUntil: now + 2000
  }
  await createRedisLookupTier({ connection: a, maxEntryBytes: 1024 }).set('k', entry)
  t.same(
    await createRedisLookupTier({ connection: b, maxEntryBytes: 1024 }).get('k'),
    entry,
    'lookup tier'
  )

  const ia = createRedisIdempotencyStore({ connection: a, ttlMs: 60_000, claimTtlMs: 5000 })
  const ib = createRedisIdempotencyStore({ connection: b, ttlMs: 60_000, claimTtlMs: 5000 })
  const claim = await acquire(ia, 'key', 'fp')
  await claim.sending()
  await claim.complete({ statusCode: 200, headers: {}, body: '{}' })
  const answer = { statusCode: 200, headers: {}, body: '{}' }
  t.same(await ib.begin('key', 'fp'), { state: 'completed', response: answer }, 'idempotency')
  await (await acquire(ib, 'released', 'fp')).release()
  t.equal(await ia.size(), 1, 'size')
  const abandoned = await acquire(ib, 'abandoned', 'fp')
  await abandoned.sending()
  await abandoned.abandon()
  t.same(await ia.begin('abandoned', 'fp'), { state: 'unknown' }, 'an outcome kept unknown')
  // What a claim waits for with replicas in sync (none here: 0 acknowledged at once).
  t.equal(await a.client.wait(0, 10), 0, 'WAIT')
  await until(
    () => a.health() === 'up' && b.health() === 'up',
    3000,
    'the health check writes its key and reads INFO'
  )

  const Store = createRedisRateLimitStore(a)
  const count = () =>
    new Promise((resolve) =>
      new Store({}).incr(
        'client:x',
        (error, result) => resolve(error ?? result?.current),
        60_000,
        10
      )
    )
  t.equal(await count(), 1, 'rate limits')
  t.equal(await count(), 2, 'counted in Redis')

  const [ea, eb] = [a, b].map((connection) =>
    createRedisEventLog({
      connection,
      clock: Date.now,
      windowMs: 60_000,
      maxEntries: 10,
      blockMs: 100
    })
  )
  t.teardown(() => Promise.all([ea?.close(), eb?.close()]))
  const received: LogEntry[] = []
  eb?.subscribe((event) => received.push(event))
  await until(
    async () => {
      await ea?.publish({
        type: 'booking.booked',
        occurredAt: new Date().toISOString(),
        requestId: 'r',
        client: null,
        data: {}
      })
      return received.length > 0
    },
    3000,
    'an event from A on B'
  )
  t.same(
    await eb?.since(received[0]!.id),
    { state: 'replayed', entries: received.slice(1) },
    'events, and their replay'
  )
  t.equal((await eb?.since('0-0'))?.state, 'replayed')

  const tickets = createRedisTicketStore({ connection: a })
  await tickets.issue('ticket', 'yard', 1000)
  t.same(
    await createRedisTicketStore({ connection: b }).redeem('ticket'),
    { client: 'yard' },
    'tickets'
  )

  const tokens = createRedisTokenStore({ connection: a, lockTtlMs: 2000 })
  const session = await tokens.renew(undefined, async () => ({
    authorization: 'Bearer t',
    expiresAt: Date.now() + 60_000
  }))
  t.same(
    await createRedisTokenStore({ connection: b, lockTtlMs: 2000 }).get(),
    session,
    'hub session'
  )
  t.same(
    logs.filter((line) => Number(line.level) >= 40).map((line) => line.msg),
    [],
    'no warning or error logged'
  )
})

test("what the gateway's user is refused: CLIENT, SELECT, any Lua, FUNCTION, KEYS, FLUSH*, " +
  'CONFIG, DEBUG, other prefixes', async (t) => {
  const server = await aclServer(t)
  const raw = new Redis(server.url, { disableClientInfo: true, maxRetriesPerRequest: 0 })
  t.teardown(() => raw.disconnect())
  const refused: Array<[string, ...Array<string | number>]> = [
    ['CLIENT', 'LIST'],
    ['CLIENT', 'PAUSE', 100],
    ['CLIENT', 'KILL', 'ID', 1],
    ['CLIENT', 'NO-EVICT', 'on'],
    ['CLIENT', 'SETNAME', 'x'],
    ['SELECT', 1],
    ['EVAL', 'while true do end', 0],
    ['EVAL', 'return 1', 0],
    ['EVALSHA', 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db', 0],
    ['EVAL_RO', 'return 1', 0],
    ['SCRIPT', 'LOAD', 'while true do end'],
    ['SCRIPT', 'KILL'],
    ['SCRIPT', 'FLUSH'],
    [
      'FUNCTION',
      'LOAD',
      "#!lua name=loop\nredis.register_function('loop', function() while true do end end)"
    ],
    ['FUNCTION', 'DELETE', FUNCTION_LIBRARY.name],
    ['FUNCTION', 'FLUSH'],
    ['FUNCTION', 'KILL'],
    ['FUNCTION', 'LIST'],
    ['KEYS', '*'],
    ['FLUSHALL'],
    ['FLUSHDB'],
    ['CONFIG', 'GET', '*'],
    ['CONFIG', 'SET', 'maxmemory', '1'],
    ['DEBUG', 'SLEEP', 0],
    ['SHUTDOWN'],
    ['MONITOR'],
    ['ACL', 'LIST'],
    ['PING'],
    ['SWAPDB', 0, 1],
    ['MOVE', 'test:k', 1],
    ['BGSAVE'],
    ['GET', 'other:key'],
    ['SET', 'other:key', '1'],
    ['PUBLISH', 'test:events', 'x'],
    ['XINFO', 'GROUPS', 'test:events:log']
  ]
  for (const [command, ...args] of refused) {
    await t.rejects(raw.call(command, ...args), /NOPERM/, `${command} ${args.join(' ')}`.trim())
  }
  t.equal(
    await raw.set('test:k', '1'),
    'OK',
    'while its own keys are its own, on the same connection'
  )

  const functions = functionsUser(t, server)
  for (const [command, ...args] of [
    ['GET', 'test:k'],
    ['FCALL', `${FUNCTION_LIBRARY.name}_stateRelease`, 1, 'test:k', '1'],
    ['FUNCTION', 'DELETE', 'x'],
    ['FUNCTION', 'FLUSH'],
    ['CLIENT', 'LIST']
  ] as const) {
    await t.rejects(
      functions.call(command, ...args),
      /NOPERM/,
      `functions user: ${command} ${args.join(' ')}`
    )
  }
})

test('the whole gateway under these rules: lookups, idempotent writes, rate limits, readiness ' +
  'and metrics, nothing logged against Redis', async (t) => {
  const server = await aclServer(t)
  await loadFunctionLibrary(functionsUser(t, server))
  const { app, logs } = await build(t, {
    env: {
      REDIS_URL: server.url,
      REDIS_KEY_PREFIX: PREFIX,
      RATE_LIMIT_MAX: '6',
      CACHE_TTL_SECONDS: '30'
    }
  })
  await until(
    async () => (await app.inject({ url: '/health/ready' })).statusCode === 200,
    5000,
    'ready with Redis up'
  )
  const lookup = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  t.equal((await app.inject({ url: lookup })).statusCode, 200, 'a lookup')
  t.equal((await app.inject({ url: lookup })).statusCode, 200, 'again')
  const booked = {
    method: 'POST' as const,
    url: '/v1/bookings/BKG-20240301-0001/booked',
    payload: { booked: true },
    headers: { 'idempotency-key': 'acl-1' }
  }
  const first = await app.inject(booked)
  t.equal(first.statusCode, 200, 'an idempotent write')
  const again = await app.inject(booked)
  t.equal(again.headers['idempotent-replayed'], 'true', 'replayed from Redis')
  t.equal(again.body, first.body)
  const metrics = (await app.inject({ url: '/metrics' })).body
  t.match(metrics, /^gateway_redis_up 1$/m)
  t.match(metrics, /^gateway_idempotency_entries 1$/m, 'the entries counted (SCAN)')
  // Six /v1 requests a window: four so far.
  t.same(
    [
      (await app.inject({ url: lookup })).statusCode,
      (await app.inject({ url: lookup })).statusCode,
      (await app.inject({ url: lookup })).statusCode
    ],
    [200, 200, 429],
    'the rate limit, counted in Redis'
  )
  const raw = new Redis(server.url, { disableClientInfo: true })
  t.teardown(() => raw.disconnect())
  t.ok(
    (await raw.scan(0, 'MATCH', `${PREFIX}rate-limit:*`))[1].length > 0,
    'its counters are in Redis'
  )
  const complaints = logs.filter(
    (line) =>
      Number(line.level) >= 40 && /redis|rate limits|idempotency|NOPERM/i.test(JSON.stringify(line))
  )
  t.same(
    complaints.map((line) => line.msg),
    [],
    'no warning or error about Redis'
  )
})

test("where the library is missing, the gateway's user cannot load it: the log says how, the " +
  'stores degrade, and it works once an administrator has', async (t) => {
  const server = await aclServer(t)
  const logs: Array<Record<string, unknown>> = []
  const connection = await connect(t, server, { logs })
  await until(() => logs.some((line) => line.level === 50), 3000, 'the error line')
  const error = logs.find((line) => line.level === 50)
  t.match(error, {
    library: FUNCTION_LIBRARY.name,
    reason: /NOPERM.*function\|load/,
    msg: `redis: the gateway's function library ${FUNCTION_LIBRARY.name} is not loaded, and this ` +
      `Redis user may not load it: ${LOAD_HINT}`
  })
  const idempotency = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 5000 })
  await t.rejects(
    idempotency.begin('k', 'fp'),
    { code: 'STATE_UNAVAILABLE' },
    'an idempotent write cannot claim its key'
  )
  t.equal(logs.filter((line) => line.level === 50).length, 1, 'said once, not at each call')
  await loadFunctionLibrary(functionsUser(t, server))
  t.match(
    await idempotency.begin('k', 'fp'),
    { state: 'acquired' },
    'loaded by the functions user: works without a restart'
  )
})

test('a /db in REDIS_URL under these rules: the refused SELECT is logged as an error, not only ' +
  'at debug level', async (t) => {
  const server = await aclServer(t)
  await loadFunctionLibrary(functionsUser(t, server))
  const logs: Array<Record<string, unknown>> = []
  await connect(t, server, { logs, url: `${server.url}/2` })
  await until(() => logs.some((line) => line.level === 50), 3000, 'the error line')
  t.match(
    logs.find((line) => line.level === 50),
    { reason: /NOPERM.*'select'/, msg: /leave the \/db off REDIS_URL/ }
  )
})

test('a Redis that lets the gateway load its library (no ACL): it loads it itself, ' +
  'once', async (t) => {
  const server = await startRedisServer(t)
  const logs: Array<Record<string, unknown>> = []
  const connection = await connect(t, server, { logs })
  await until(
    () => logs.some((line) => line.msg === "redis: loaded the gateway's function library"),
    3000,
    'loaded'
  )
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  const libraries = (await raw.call('FUNCTION', 'LIST')) as unknown[]
  t.equal(libraries.length, 1, 'one library')
  t.match(JSON.stringify(libraries), FUNCTION_LIBRARY.name)
  await raw.call('FUNCTION', 'FLUSH')
  const store = createRedisIdempotencyStore({ connection, ttlMs: 60_000, claimTtlMs: 5000 })
  t.match(await store.begin('k', 'fp'), { state: 'acquired' }, 'flushed: loaded again when called')
})
