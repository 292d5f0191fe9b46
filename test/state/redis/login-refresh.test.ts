import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { test } from 'tap'
import { buildApp } from '../../../src/app.ts'
import { resolveConfig } from '../../../src/config/resolve.ts'
import {
  SANDBOX_PASSWORD,
  sandboxEnv,
  startSandbox,
  type Sandbox
} from '../../../src/sandbox/index.ts'
import { manualClock, RESILIENCE_OFF, testProfile, until } from '../../helpers/helper.ts'
import { startRedisServer, until as eventually } from '../../helpers/redis-server.ts'

// Two gateway replicas in login mode on one real redis-server, in front of a
// sandbox answering the login in the hub's envelope with a refresh token:
// one login and one refresh for both, whichever replica asks first, and the
// refresh token shared through the session in Redis.

type Test = Parameters<Parameters<typeof test>[0]>[0]

const PREFIX = 'cgw-login:'
const LOOKUP = (n: number | string) => `/v1/customs/bc261/containers?blNo=BL${n}`

async function replicas (t: Test) {
  const redis = await startRedisServer(t)
  // One clock for the replicas and the hub's tokens (Redis's own expiry runs on its clock: the
  // steps below stay within it).
  const clock = manualClock()
  const sandbox = await startSandbox({
    loginAnswer: 'envelope',
    loginTokenTtlMs: 60_000,
    now: clock.now
  })
  t.teardown(() => sandbox.close())
  const config = resolveConfig({
    ...sandboxEnv(sandbox.url),
    ...RESILIENCE_OFF,
    UPSTREAM_CREDENTIALS: 'login',
    UPSTREAM_ACCESS_TOKEN: '',
    UPSTREAM_MAX_CALLS_PER_CLIENT: '0',
    LOG_LEVEL: 'debug',
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: PREFIX,
    REDIS_COMMAND_TIMEOUT_MS: '2000'
  })
  // The sandbox's login, answering in the envelope; renewed 10 s before the token expires.
  const profile = testProfile({ loginAnswer: 'envelope' }, { login: { renewBeforeSeconds: 10 } })
  const logs: string[] = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      logs.push(chunk.toString())
      callback()
    }
  })
  const start = async (): Promise<FastifyInstance> => {
    const options = { config, sandbox: true, profile, clock: clock.now }
    const app = await buildApp(options, { level: 'debug', stream })
    t.teardown(() => app.close())
    // A loaded machine may take longer than the start-up's wait for Redis: without it each replica
    // would log in itself.
    await eventually(
      async () => (await app.inject({ url: '/health/ready' })).json().data?.redis === 'up',
      10_000,
      'the replica uses Redis'
    )
    return app
  }
  const [a, b] = await Promise.all([start(), start()])
  const raw = new Redis(redis.url)
  t.teardown(() => raw.disconnect())
  return { a, b, start, sandbox, clock, raw, logs }
}

/** The Authorization values the hub saw on lookups, in order. */
function used (sandbox: Sandbox): string[] {
  return sandbox.requests
    .filter((r) => r.operation === 'kontainerbc261')
    .map((r) => String(r.headers.authorization))
}

test('two replicas on one Redis: one login, one refresh before expiry, one refresh for a 401 on ' +
  'both; the refresh token shared through the session', async (t) => {
  const { a, b, start, sandbox, clock, raw, logs } = await replicas(t)
  const both = async (label: string | number) => {
    const answers = await Promise.all(
      [...Array(4)].flatMap((_, i) => [
        a.inject({ url: LOOKUP(`A${label}-${i}`) }),
        b.inject({ url: LOOKUP(`B${label}-${i}`) })
      ])
    )
    t.same(
      answers.map((res) => res.statusCode),
      Array(8).fill(200),
      `${label}: every caller on both replicas answered`
    )
  }

  await both('first')
  t.equal(sandbox.count('login'), 1, 'one login for both replicas, asked at once')
  const session = JSON.parse((await raw.get(`${PREFIX}hub-session`)) ?? '{}') as Record<
    string,
    unknown
  >
  t.match(
    session,
    { v: 1, authorization: /^Bearer sbx-session-/, refreshToken: /^sbx-refresh-/ },
    'the shared session holds the refresh token'
  )

  // Into the renewal window (60 s tokens, renewed 10 s before): both replicas want a renewal at
  // once.
  clock.advance(51_000)
  await both('window')
  await until(() => logs.join('').includes('renewed the hub token with the refresh token'), 5000)
  // Whatever the second replica was waiting for has arrived by now.
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(
    sandbox.count('refresh'),
    1,
    'one refresh for both replicas (the sandbox honours a refresh token once: a second would ' +
    'have been refused)'
  )
  t.equal(sandbox.count('login'), 1, 'and no login')
  const renewed = JSON.parse((await raw.get(`${PREFIX}hub-session`)) ?? '{}') as Record<
    string,
    unknown
  >
  t.not(renewed.authorization, session.authorization, 'the new session is shared')
  t.not(renewed.refreshToken, session.refreshToken, 'with the refresh token the renewal brought')

  clock.advance(10_000) // the first token has expired
  sandbox.reset()
  await both('after')
  t.same(
    [...new Set(used(sandbox))],
    [renewed.authorization],
    'both replicas send the renewed token, no 401 and retry'
  )

  // The hub forgets its access tokens: both replicas meet a 401 at once, one refresh renews for
  // both.
  sandbox.expireTokens()
  await both('401')
  t.equal(sandbox.count('refresh'), 1, 'one refresh for the 401 on both replicas')
  t.equal(sandbox.count('login'), 0, 'no login: the refresh token was good')
  // A caller that set out after the renewal (a busy machine staggers them) sends the new token at
  // once and meets no 401.
  const round = new Map<string, number>()
  for (const r of sandbox.requests) {
    if (r.operation === 'kontainerbc261' && /401-/.test(r.values.blNo ?? '')) {
      round.set(r.values.blNo!, (round.get(r.values.blNo!) ?? 0) + 1)
    }
  }
  t.equal(round.size, 8, 'every caller of the 401 round reached the hub')
  t.ok(
    [...round.values()].every((n) => n === 1 || n === 2),
    'each caller asked once, or once more after its 401, no more ' +
    `(${[...round.values()].join(', ')})`
  )
  t.ok(
    [...round.values()].some((n) => n === 2),
    'some met the 401 and were retried'
  )

  // A third replica joins: it takes the session from Redis, refresh token included, and renews with
  // it.
  const c = await start()
  sandbox.reset()
  t.equal((await c.inject({ url: LOOKUP('C1') })).statusCode, 200)
  t.equal(sandbox.count('login') + sandbox.count('refresh'), 0, 'the shared session, no login')
  sandbox.expireTokens()
  t.equal((await c.inject({ url: LOOKUP('C2') })).statusCode, 200)
  t.same(
    [sandbox.count('refresh'), sandbox.count('login')],
    [1, 0],
    'renewed by the refresh token it read from Redis, not by a login'
  )

  const text = logs.join('')
  const tokens = [
    session.authorization,
    renewed.authorization,
    session.refreshToken,
    renewed.refreshToken
  ].map((value) => String(value).replace(/^Bearer /, ''))
  for (const secret of [...tokens, SANDBOX_PASSWORD]) {
    t.notOk(text.includes(secret), `${secret.slice(0, 12)}… ` + 'is in no log line')
  }
})
