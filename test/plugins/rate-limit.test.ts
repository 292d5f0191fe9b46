import { mock } from 'node:test'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build, type TestClient } from '../helpers/helper.ts'

// A cheap request: refused by validation, so no hub call, but counted like any other.
const CHEAP = '/v1/customs/bc20/bills-of-lading?npwp=1'
const GOOD = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`

const CLIENTS: TestClient[] = [
  { name: 'small', key: 'key-small', scopes: ['customs:read'], rateLimit: { max: 3 } },
  { name: 'large', key: 'key-large', scopes: ['customs:read'], rateLimit: { max: 5 } },
  { name: 'default', key: 'key-default', scopes: ['customs:read'] },
  {
    name: 'brief',
    key: 'key-brief',
    scopes: ['customs:read'],
    rateLimit: { max: 2, timeWindow: '1 s' }
  }
]
const as = (name: string) => ({ authorization: `Bearer key-${name}` })

test("each client has its own limit, from the file or the default, and one client's 429 leaves " +
  'the others alone', async (t) => {
  const { app, sandbox } = await build(t, { clients: CLIENTS, env: { RATE_LIMIT_MAX: '4' } })
  for (let i = 1; i <= 3; i++) {
    const res = await app.inject({ url: CHEAP, headers: as('small') })
    t.equal(res.statusCode, 400, `small #${i} is served`)
    t.equal(res.headers['x-ratelimit-limit'], '3')
    t.equal(res.headers['x-ratelimit-remaining'], String(3 - i))
  }
  const limited = await app.inject({ url: GOOD, headers: as('small') })
  t.equal(limited.statusCode, 429, 'small #4 is limited')
  const body = limited.json()
  t.same(Object.keys(body).sort(), ['code', 'error', 'message', 'requestId', 'statusCode'])
  t.match(body, {
    statusCode: 429,
    code: 'RATE_LIMITED',
    error: 'Too Many Requests',
    requestId: limited.headers['x-request-id']
  })
  t.match(limited.headers['retry-after'], /^[1-9]\d*$/, 'retry-after in seconds')
  t.ok(Number(limited.headers['retry-after']) <= 60)
  t.equal(limited.headers['x-ratelimit-limit'], '3')
  t.equal(limited.headers['x-ratelimit-remaining'], '0')
  t.match(limited.headers['x-ratelimit-reset'], /^\d+$/)
  t.equal(sandbox.count(), 0, 'a limited request never reaches the hub')

  const other = await app.inject({ url: GOOD, headers: as('large') })
  t.equal(other.statusCode, 200, 'another client is not affected')
  t.equal(other.headers['x-ratelimit-limit'], '5')
  t.equal(other.headers['x-ratelimit-remaining'], '4')

  for (let i = 1; i <= 4; i++) {
    t.equal(
      (await app.inject({ url: CHEAP, headers: as('default') })).statusCode,
      400,
      `default #${i}`
    )
  }
  const fifth = await app.inject({ url: CHEAP, headers: as('default') })
  t.equal(fifth.statusCode, 429, 'a client without its own limit gets RATE_LIMIT_MAX')
  t.equal(fifth.headers['x-ratelimit-limit'], '4')

  t.equal(
    (await app.inject({ url: CHEAP, headers: as('small') })).statusCode,
    429,
    'small stays limited within its window'
  )
})

test('a client\'s own window: limited, then served again once it has passed', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  // The window is @fastify/rate-limit's LocalStore's, which reads Date.now() itself: Date
  // alone is faked, for this test only (timers, I/O and the rest of the app keep real time).
  mock.timers.enable({ apis: ['Date'], now: Date.now() })
  t.teardown(() => mock.timers.reset())
  t.equal((await app.inject({ url: CHEAP, headers: as('brief') })).statusCode, 400)
  t.equal((await app.inject({ url: CHEAP, headers: as('brief') })).statusCode, 400)
  const limited = await app.inject({ url: CHEAP, headers: as('brief') })
  t.equal(limited.statusCode, 429)
  t.equal(limited.headers['retry-after'], '1')
  mock.timers.tick(1000)
  t.equal(
    (await app.inject({ url: CHEAP, headers: as('brief') })).statusCode,
    400,
    'the window has passed'
  )
})

test('callers without a known key are limited by address, each address on its own', async (t) => {
  const { app } = await build(t, { clients: CLIENTS, env: { RATE_LIMIT_MAX: '2' } })
  const from = (remoteAddress: string, headers: Record<string, string> = {}) =>
    app.inject({ url: CHEAP, remoteAddress, headers })
  t.equal((await from('10.0.0.1')).statusCode, 401)
  t.equal((await from('10.0.0.1', { authorization: 'Bearer guess-1' })).statusCode, 401)
  const guess = await from('10.0.0.1', { authorization: 'Bearer guess-2' })
  t.equal(guess.statusCode, 429, 'guessing keys costs the address its budget')
  t.equal(guess.json().code, 'RATE_LIMITED')
  t.equal((await from('10.0.0.2')).statusCode, 401, 'another address is not affected')
  t.equal(
    (await from('10.0.0.1', as('small'))).statusCode,
    400,
    'a known key from that address is limited as its client'
  )
})

test('with authentication off, every caller is limited by address', async (t) => {
  const { app } = await build(t, { env: { RATE_LIMIT_MAX: '2' } })
  t.equal((await app.inject({ url: CHEAP, remoteAddress: '10.0.0.9' })).statusCode, 400)
  t.equal(
    (await app.inject({ url: CHEAP, remoteAddress: '10.0.0.9', headers: as('small') })).statusCode,
    400
  )
  t.equal((await app.inject({ url: CHEAP, remoteAddress: '10.0.0.9' })).statusCode, 429)
  t.equal((await app.inject({ url: CHEAP, remoteAddress: '10.0.0.10' })).statusCode, 400)
})

test('unknown routes are limited too, in the same budget', async (t) => {
  const { app } = await build(t, { clients: CLIENTS })
  for (let i = 1; i <= 3; i++) {
    const res = await app.inject({ url: `/v1/scan/${i}`, headers: as('small') })
    t.equal(res.statusCode, 404, `404 #${i}`)
    t.equal(res.headers['x-ratelimit-limit'], '3')
  }
  const limited = await app.inject({ url: '/v1/scan/4', headers: as('small') })
  t.equal(limited.statusCode, 429)
  t.equal(limited.json().code, 'RATE_LIMITED')
  t.ok(limited.headers['retry-after'])
  t.equal(
    (await app.inject({ url: CHEAP, headers: as('small') })).statusCode,
    429,
    'and the routes share that budget'
  )
})

test('health, metrics and the docs are never limited', async (t) => {
  const { app } = await build(t, { clients: CLIENTS, env: { RATE_LIMIT_MAX: '1' } })
  for (const url of [
    '/health/live',
    '/health/ready',
    '/metrics',
    '/openapi.json',
    '/docs/',
    '/docs/json'
  ]) {
    for (let i = 0; i < 4; i++) {
      const res = await app.inject({ url, remoteAddress: '10.0.0.5' })
      t.equal(res.statusCode, 200, `${url} #${i + 1}`)
      t.equal(res.headers['x-ratelimit-limit'], undefined, `${url}: no rate limit headers`)
    }
  }
  t.equal(
    (await app.inject({ url: CHEAP, remoteAddress: '10.0.0.5' })).statusCode,
    401,
    "they did not use the address's budget"
  )
})
