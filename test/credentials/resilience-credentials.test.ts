import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F, SANDBOX_PASSWORD } from '../../src/sandbox/index.ts'
import { build, manualClock, until } from '../helpers/helper.ts'

const BL = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`

async function tempDir (t: { teardown (fn: () => unknown): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gateway-token-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  return dir
}

test('static token from a file: a rotated token is picked up without a restart', async (t) => {
  const dir = await tempDir(t)
  const file = join(dir, 'token')
  await writeFile(file, 'token-one\n')
  const { app, sandbox } = await build(t, {
    env: { UPSTREAM_ACCESS_TOKEN: '', UPSTREAM_ACCESS_TOKEN_FILE: file },
    sandbox: { accessToken: 'token-one' }
  })
  t.equal((await app.inject({ url: BL })).statusCode, 200)
  t.equal(
    sandbox.requests.at(-1)?.headers.authorization,
    'token-one',
    'read from the file, trimmed'
  )

  // Rotation: the hub takes the new token and the file is replaced at once.
  sandbox.setAccessToken('token-two')
  await writeFile(file, 'token-two\n')
  sandbox.reset()
  const res = await app.inject({ url: BL })
  t.equal(res.statusCode, 200, 'the 401 made the gateway re-read the file and retry once')
  t.same(sandbox.requests.map(r => r.headers.authorization), ['token-one', 'token-two'])

  // Later requests carry the new token straight away.
  sandbox.reset()
  t.equal((await app.inject({ url: BL })).statusCode, 200)
  t.same(sandbox.requests.map(r => r.headers.authorization), ['token-two'])
})

test('static token: a 401 with no new token is UPSTREAM_AUTH_FAILED after one call', async (t) => {
  const { app, sandbox } = await build(t, { sandbox: { accessToken: 'something-else' } })
  const res = await app.inject({ url: BL })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_AUTH_FAILED')
  t.equal(sandbox.count('noblbc20'), 1)
})

/** Login mode on the sandbox: the login's address is its profile's, the account sandboxEnv's. */
function loginEnv (extra: Record<string, string> = {}) {
  return { UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '', ...extra }
}

test('login mode: the gateway logs in once, uses the token, and never logs it', async (t) => {
  const { app, sandbox, rawLogs } = await build(t, { env: loginEnv() })
  for (let i = 0; i < 5; i++) {
    t.equal((await app.inject({ url: `/v1/customs/bc261/containers?blNo=BL${i}` })).statusCode, 200)
  }
  t.equal(sandbox.count('login'), 1)
  const used = sandbox.requests
    .filter((r) => r.operation === 'kontainerbc261')
    .map((r) => r.headers.authorization as string)
  t.match(used[0], /^Bearer sbx-session-/)
  t.equal(new Set(used).size, 1)
  const token = used[0]!.slice('Bearer '.length)
  t.notOk(rawLogs.some(line => line.includes(token)), 'the token is in no log line')
  t.notOk(rawLogs.some(line => line.includes(SANDBOX_PASSWORD)), 'nor the login password')
})

test('login mode: the token is renewed before it expires', async (t) => {
  // One clock for the gateway and the hub's tokens.
  const clock = manualClock()
  const { app, sandbox } = await build(t, {
    env: loginEnv(),
    profile: { login: { renewBeforeSeconds: 1 } },
    sandbox: { loginTokenTtlMs: 2000, now: clock.now },
    clock: clock.now
  })
  t.equal((await app.inject({ url: '/v1/customs/bc261/containers?blNo=A1' })).statusCode, 200)
  t.equal(sandbox.count('login'), 1)
  clock.advance(1200) // inside the renewal window
  t.equal((await app.inject({ url: '/v1/customs/bc261/containers?blNo=A2' })).statusCode, 200)
  await until(() => sandbox.count('login') === 2, 1000) // the renewal runs in the background
  t.equal(sandbox.count('login'), 2, 'renewed')
  clock.advance(1000) // the first token has expired now
  t.equal((await app.inject({ url: '/v1/customs/bc261/containers?blNo=A3' })).statusCode, 200)
  const calls = sandbox.requests.filter(r => r.operation === 'kontainerbc261')
  const first = calls[0]?.headers.authorization
  const a3 = calls.filter(r => r.params.noBl === 'A3')
  t.equal(a3.length, 1, 'no 401 and retry: the token in use was already renewed')
  t.not(a3[0]?.headers.authorization, first)
})

test('login mode: 50 concurrent callers hitting a 401 cause one login, and all ' +
  'succeed', async (t) => {
  // 50 hub calls at once from one address: past UPSTREAM_MAX_CALLS_PER_CLIENT, which is not the
  // subject here.
  const { app, sandbox } = await build(t, { env: loginEnv({ UPSTREAM_MAX_CALLS_PER_CLIENT: '0' }) })
  t.equal((await app.inject({ url: '/v1/customs/bc261/containers?blNo=WARM' })).statusCode, 200)
  t.equal(sandbox.count('login'), 1)
  sandbox.expireTokens()
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      app.inject({ url: `/v1/customs/bc261/containers?blNo=C${i}` })
    )
  )
  t.same(
    answers.map((res) => res.statusCode).filter((status) => status !== 200),
    [],
    'all 200'
  )
  t.equal(sandbox.count('login'), 2, 'one new login for all of them')
})

test('login mode: a hub answering 401 forces at most one login per interval; callers in between ' +
  'fail at once', async (t) => {
  const clock = manualClock()
  const profile = { login: { minIntervalSeconds: 2 } }
  const { app, sandbox } = await build(t, { env: loginEnv(), profile, clock: clock.now })
  // SBX-401: the hub refuses every token for this lookup, as it would a revoked account.
  const answers = []
  for (let i = 0; i < 10; i++) {
    answers.push(await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-401' }))
  }
  t.same(new Set(answers.map((res) => res.json().code)), new Set(['UPSTREAM_AUTH_FAILED']))
  t.equal(
    sandbox.count('login'),
    2,
    'the first login and one forced by the 401: not one per request'
  )
  t.equal(sandbox.count('kontainerbc261'), 11, 'one retry with the new token, then one call each')
  // Once the interval has passed, a 401 may force a login again.
  clock.advance(2000)
  await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-401' })
  t.equal(sandbox.count('login'), 3)
  // Other lookups keep working on the token the hub accepts.
  t.equal((await app.inject({ url: BL })).statusCode, 200)
  t.equal(sandbox.count('login'), 3)
})

test('login mode: a failing login is not retried by every request', async (t) => {
  const { app, sandbox } = await build(t, { env: loginEnv({ UPSTREAM_LOGIN_PASSWORD: 'wrong' }) })
  for (let i = 0; i < 10; i++) {
    t.equal((await app.inject({ url: BL })).json().code, 'UPSTREAM_AUTH_FAILED')
  }
  t.equal(sandbox.count('login'), 1, 'one login within the interval (30 s by default)')
  t.equal(sandbox.count('noblbc20'), 0)
})

test('login mode: a refused login is UPSTREAM_AUTH_FAILED', async (t) => {
  const { app } = await build(t, { env: loginEnv({ UPSTREAM_LOGIN_PASSWORD: 'wrong' }) })
  const res = await app.inject({ url: BL })
  t.equal(res.statusCode, 502)
  t.equal(res.json().code, 'UPSTREAM_AUTH_FAILED')
})

test("forward mode: the caller's token goes upstream and cached data is never " +
  'shared', async (t) => {
  const { app, sandbox, rawLogs } = await build(t, {
    env: {
      UPSTREAM_CREDENTIALS: 'forward',
      UPSTREAM_ACCESS_TOKEN: '',
      CACHE_TTL_SECONDS: '60',
      CACHE_STALE_IF_ERROR_SECONDS: '60'
    },
    sandbox: { acceptedTokens: ['caller-a-token', 'caller-b-token'] }
  })
  const asA = { 'x-upstream-authorization': 'caller-a-token' }
  const asB = { 'x-upstream-authorization': 'caller-b-token' }
  t.equal((await app.inject({ url: BL, headers: asA })).json().meta.cached, false)
  t.equal(
    (await app.inject({ url: BL, headers: asA })).json().meta.cached,
    true,
    "A's own repeat is cached"
  )
  const b = await app.inject({ url: BL, headers: asB })
  t.equal(b.json().meta.cached, false, "B is not served A's cached answer")
  t.same(
    sandbox.requests.map((r) => r.headers.authorization),
    ['caller-a-token', 'caller-b-token']
  )

  // Concurrent identical lookups of two callers are not coalesced either.
  sandbox.reset()
  await Promise.all([
    app.inject({ url: `${BL}`, headers: { ...asA, 'cache-control': 'no-cache' } }),
    app.inject({ url: `${BL}`, headers: { ...asB, 'cache-control': 'no-cache' } })
  ])
  t.equal(sandbox.count('noblbc20'), 2)

  const missing = await app.inject({ url: BL })
  t.equal(missing.statusCode, 401)
  t.equal(missing.json().code, 'UNAUTHORIZED')
  t.match(missing.json().details[0].field, 'header.x-upstream-authorization')

  const stranger = await app.inject({
    url: `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer.npwp}`,
    headers: { 'x-upstream-authorization': 'unknown-token' }
  })
  t.equal(stranger.statusCode, 502)
  t.equal(stranger.json().code, 'UPSTREAM_AUTH_FAILED')
  t.notOk(
    rawLogs.some((line) => line.includes('caller-a-token')),
    'forwarded tokens are in no log line'
  )
})
