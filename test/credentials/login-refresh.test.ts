import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { test } from 'tap'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_PASSWORD, type Sandbox } from '../../src/sandbox/index.ts'
import { build, manualClock, until } from '../helpers/helper.ts'

// Login mode against the sandbox playing the hub as its public callers show
// it: the token, its lifetime and a refresh token in an envelope
// ({"status", "message", "item": {…}}), renewed by a POST carrying the
// refresh token (each of which the sandbox honours once), a new login when
// the refresh is refused.

type TestLike = Parameters<Parameters<typeof test>[0]>[0]

const LOOKUP = (n: number | string) => `/v1/customs/bc261/containers?blNo=BL${n}`

/** Login mode (on a sandbox answering in the envelope, its profile reads the fields at item.*). */
function envelopeEnv (extra: Record<string, string> = {}) {
  return { UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '', ...extra }
}

/** The Authorization values the hub saw on lookups, in order. */
function used (sandbox: Sandbox): string[] {
  return sandbox.requests
    .filter((r) => r.operation === 'kontainerbc261')
    .map((r) => String(r.headers.authorization))
}

/**
 * How many times the gateway has logged in and renewed by refresh: counted
 * from its log lines, written once the answer is read and the session in
 * place (the hub's own count moves as the request arrives, before that).
 */
function renewals (rawLogs: string[]): { logins: number, refreshes: number } {
  return {
    logins: rawLogs.filter((line) => line.includes('logged in to the hub')).length,
    refreshes: rawLogs.filter((line) =>
      line.includes('renewed the hub token with the refresh token')
    ).length
  }
}

async function metric (
  app: Awaited<ReturnType<typeof build>>['app'],
  line: string
): Promise<string | undefined> {
  const text = (await app.inject({ url: '/metrics' })).body
  return text
    .split('\n')
    .find((l) => l.startsWith(`${line} `))
    ?.split(' ')[1]
}

test("the hub's envelope: token, lifetime and refresh token read at item.*, the token renewed by " +
  'its refresh token before it expires', async (t) => {
  // One clock for the gateway and the hub's tokens.
  const clock = manualClock()
  const { app, sandbox, rawLogs } = await build(t, {
    env: envelopeEnv(),
    profile: { login: { renewBeforeSeconds: 1 } },
    sandbox: { loginAnswer: 'envelope', loginTokenTtlMs: 4000, now: clock.now },
    clock: clock.now
  })
  t.equal((await app.inject({ url: LOOKUP(1) })).statusCode, 200)
  t.equal(sandbox.count('login'), 1)
  t.match(
    used(sandbox)[0],
    /^Bearer sbx-session-/,
    'the token of item.access_token, with the scheme'
  )

  let issuedAt = clock.now()
  for (const round of [1, 2]) {
    clock.advance(issuedAt + 3200 - clock.now()) // past renewal time (4 s less 1 s), before expiry
    t.equal(
      (await app.inject({ url: LOOKUP(`R${round}`) })).statusCode,
      200,
      `round ${round}: the token still in use meanwhile`
    )
    await until(() => renewals(rawLogs).refreshes === round, 2000)
    t.equal(sandbox.count('refresh'), round)
    issuedAt = clock.now()
    const refresh = sandbox.requests.filter((r) => r.operation === 'refresh').at(-1)
    t.match(
      refresh,
      { method: 'POST', body: undefined, headers: { authorization: /^Bearer sbx-refresh-/ } },
      `round ${round}: a POST with the refresh token as a bearer token`
    )
    clock.advance(1000) // the previous token has expired now
    const before = sandbox.count('kontainerbc261')
    t.equal((await app.inject({ url: LOOKUP(`A${round}`) })).statusCode, 200)
    t.equal(
      sandbox.count('kontainerbc261'),
      before + 1,
      `round ${round}: no 401 and retry: the token in use was renewed`
    )
  }
  t.equal(
    sandbox.count('login'),
    1,
    'renewed twice without a login: the second refresh used the refresh token the first one ' +
    'brought (the sandbox honours each once)'
  )
  t.equal(new Set(used(sandbox)).size, 3, 'three tokens in turn')
  t.equal(await metric(app, 'gateway_hub_token_refreshes_total{outcome="ok"}'), '2')
  t.equal(await metric(app, 'gateway_hub_logins_total{outcome="ok"}'), '1')
  t.ok(rawLogs.some((line) => line.includes('renewed the hub token with the refresh token')))

  // No token, refresh token or password in any log line.
  const refreshTokens = sandbox.requests
    .filter((r) => r.operation === 'refresh')
    .map((r) => String(r.headers.authorization).slice('Bearer '.length))
  for (const secret of [
    ...new Set(used(sandbox).map((a) => a.slice('Bearer '.length))),
    ...refreshTokens,
    SANDBOX_PASSWORD
  ]) {
    t.notOk(
      rawLogs.some((line) => line.includes(secret)),
      `${secret.slice(0, 12)}… is in no log line`
    )
  }
})

test('a refresh the hub refuses is followed by one login', async (t) => {
  const clock = manualClock()
  const { app, sandbox, rawLogs } = await build(t, {
    env: envelopeEnv(),
    profile: { login: { renewBeforeSeconds: 1 } },
    sandbox: { loginAnswer: 'envelope', loginTokenTtlMs: 4000, now: clock.now },
    clock: clock.now
  })
  t.equal((await app.inject({ url: LOOKUP(1) })).statusCode, 200)
  sandbox.revokeRefreshTokens()
  clock.advance(3200)
  t.equal((await app.inject({ url: LOOKUP(2) })).statusCode, 200)
  await until(() => renewals(rawLogs).logins === 2, 2000)
  t.equal(sandbox.count('login'), 2)
  t.equal(sandbox.count('refresh'), 1, 'one refresh, refused (401)')
  clock.advance(1000)
  t.equal((await app.inject({ url: LOOKUP(3) })).statusCode, 200, 'the new login\'s token in use')
  t.equal(sandbox.count('login'), 2)
  t.equal(await metric(app, 'gateway_hub_token_refreshes_total{outcome="refused"}'), '1')
  t.ok(
    rawLogs.some(
      (line) =>
        line.includes('the hub refused the refresh token: logging in') &&
        line.includes('"upstreamStatus":401')
    )
  )

  // The session the login brought has a refresh token again: the next renewal is a refresh.
  clock.advance(2200)
  t.equal((await app.inject({ url: LOOKUP(4) })).statusCode, 200)
  await until(() => renewals(rawLogs).refreshes === 1, 2000)
  t.equal(sandbox.count('refresh'), 2)
  t.equal(sandbox.count('login'), 2)
})

test('a hub 401 forces one renewal by the refresh token for 50 concurrent callers, and a hub ' +
  'that keeps refusing at most one per interval', async (t) => {
  const clock = manualClock()
  const { app, sandbox } = await build(t, {
    env: envelopeEnv({ UPSTREAM_MAX_CALLS_PER_CLIENT: '0' }),
    profile: { login: { minIntervalSeconds: 2 } },
    sandbox: { loginAnswer: 'envelope', now: clock.now },
    clock: clock.now
  })
  t.equal((await app.inject({ url: LOOKUP('WARM') })).statusCode, 200)
  sandbox.expireTokens() // the hub forgets its access tokens; the refresh token stays good
  const answers = await Promise.all(
    Array.from({ length: 50 }, (_, i) => app.inject({ url: LOOKUP(i) }))
  )
  t.same(
    answers.map((res) => res.statusCode).filter((status) => status !== 200),
    [],
    'all 200'
  )
  t.equal(sandbox.count('refresh'), 1, 'one refresh for all of them')
  t.equal(sandbox.count('login'), 1, 'and no login')

  // SBX-401: the hub refuses every token for this lookup, as it would a revoked account.
  clock.advance(2000)
  sandbox.reset()
  for (let i = 0; i < 10; i++) {
    t.equal(
      (await app.inject({ url: '/v1/customs/bc261/containers?blNo=SBX-401' })).json().code,
      'UPSTREAM_AUTH_FAILED'
    )
  }
  t.equal(
    sandbox.count('refresh') + sandbox.count('login'),
    1,
    'one renewal forced by the 401: not one per request'
  )
  t.equal(sandbox.count('kontainerbc261'), 11, 'one retry with the new token, then one call each')
})

test('a token shorter than twice renewBeforeSeconds is renewed at half its life', async (t) => {
  const clock = manualClock()
  // 2 s tokens (the plain answer, no refresh token: renewals are logins), the default 60 s margin.
  const { app, sandbox, rawLogs } = await build(t, {
    env: { UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '' },
    sandbox: { loginTokenTtlMs: 2000, now: clock.now },
    clock: clock.now
  })
  for (let i = 0; i < 5; i++) {
    t.equal((await app.inject({ url: LOOKUP(i) })).statusCode, 200)
    clock.advance(150)
  }
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(sandbox.count('login'), 1, 'still inside the first half of its life: no renewal')
  clock.advance(400) // 1.15 s: past half
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ url: LOOKUP(`H${i}`) })).statusCode, 200)
  await until(() => renewals(rawLogs).logins === 2, 2000)
  await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(sandbox.count('login'), 2, 'one renewal for the five calls past half its life')
})

/** A login of ours, its token sent alone, renewed a second before expiry, one forced per 10 s. */
const OWN_LOGIN = {
  tokenScheme: '',
  login: { path: '/login', refreshPath: '/refresh', renewBeforeSeconds: 1, minIntervalSeconds: 10 }
}

/**
 * A small real hub login of our own on port 0: each answer from `answer`, each request recorded.
 */
async function fakeLogin (
  t: TestLike,
  answer: (req: IncomingMessage, n: number) => { status: number; body?: unknown }
) {
  const seen: Array<{ path: string; authorization: string | undefined }> = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization })
      const { status, body } = answer(req, seen.length)
      const text = body === undefined ? '' : JSON.stringify(body)
      res.writeHead(status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text)
      })
      res.end(text)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as { port: number }
  return { url: `http://127.0.0.1:${port}`, seen }
}

test('a renewal answer without a refresh token keeps the one held; a refresh that fails (5xx) is ' +
  'not retried by every call', async (t) => {
  const clock = manualClock()
  let failing = false
  // The sandbox's static token, sent bare: the hub accepts it whatever the login said.
  const auth = await fakeLogin(t, (req) => {
    if (req.url === '/login') {
      return {
        status: 200,
        body: { access_token: SANDBOX_ACCESS_TOKEN, expires_in: 4, refresh_token: 'refresh-1' }
      }
    }
    if (failing) return { status: 503, body: { message: 'maintenance' } }
    return { status: 200, body: { access_token: SANDBOX_ACCESS_TOKEN, expires_in: 4 } }
  })
  const { app, sandbox, rawLogs } = await build(t, {
    // The login under UPSTREAM_BASE_URL (the default login.service), the lookups under the
    // sandbox's UPSTREAM_HUB_URL.
    env: { UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '', UPSTREAM_BASE_URL: auth.url },
    profile: OWN_LOGIN,
    clock: clock.now
  })
  t.equal((await app.inject({ url: LOOKUP(1) })).statusCode, 200)
  t.equal(
    sandbox.requests.at(-1)?.headers.authorization,
    SANDBOX_ACCESS_TOKEN,
    'an empty tokenScheme: the token alone'
  )
  for (const round of [1, 2]) {
    clock.advance(3200) // into the renewal window of the token of the previous round
    t.equal((await app.inject({ url: LOOKUP(`R${round}`) })).statusCode, 200)
    await until(() => renewals(rawLogs).refreshes === round, 2000)
  }
  t.same(
    auth.seen.map((s) => [s.path, s.authorization]),
    [
      ['/login', undefined],
      ['/refresh', 'Bearer refresh-1'],
      ['/refresh', 'Bearer refresh-1']
    ],
    'the second refresh carries the refresh token of the login: the first renewal brought none'
  )

  // The hub's renewal fails: the token in use stays in use, and one failure waits out the interval.
  failing = true
  clock.advance(3200)
  for (let i = 0; i < 10; i++) {
    t.equal(
      (await app.inject({ url: LOOKUP(`F${i}`) })).statusCode,
      200,
      'the valid token still serves'
    )
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(auth.seen.length, 4, 'one failed refresh for ten calls in the renewal window')
  t.equal(await metric(app, 'gateway_hub_token_refreshes_total{outcome="failed"}'), '1')
})

test('odd answers: a lifetime written as text or missing, a renewal without a token, an answer ' +
  'that is no JSON, cut short or never sent', async (t) => {
  const clock = manualClock()
  // Each request to the login or the renewal gets the next of these, in turn.
  const queue: Array<(res: ServerResponse) => void> = [
    // A hub that stringifies every value: the lifetime as text, still 4 s.
    (res) =>
      send(res, {
        access_token: SANDBOX_ACCESS_TOKEN,
        expires_in: '4',
        refresh_token: 'refresh-1'
      }),
    // The renewal answers 200 with a failure text and no token: a refusal, so a login follows.
    (res) => send(res, { status: 'failed', message: 'token tidak valid' }),
    // No lifetime at all: five minutes, and no refresh token this time.
    (res) => send(res, { access_token: SANDBOX_ACCESS_TOKEN }),
    // Then the login answers text that is no JSON, a body cut short, and nothing (the connection
    // dropped).
    (res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end('<html>maintenance</html>')
    },
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 100 })
      res.write('{"access_token"', () => res.socket?.destroy())
    },
    (res) => res.socket?.destroy()
  ]
  function send (res: ServerResponse, body: unknown): void {
    const text = JSON.stringify(body)
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text)
    })
    res.end(text)
  }
  const seen: string[] = []
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      seen.push(req.url ?? '')
      ;(queue.shift() ?? ((r) => r.destroy()))(res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const auth = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  const { app, rawLogs } = await build(t, {
    // The login under UPSTREAM_BASE_URL (the default login.service), the lookups under the
    // sandbox's UPSTREAM_HUB_URL.
    env: { UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '', UPSTREAM_BASE_URL: auth },
    profile: OWN_LOGIN,
    clock: clock.now
  })
  const code = async (): Promise<string | number> => {
    const res = await app.inject({ url: LOOKUP('X') })
    return res.statusCode === 200 ? 200 : res.json().code
  }
  t.equal(await code(), 200)
  clock.advance(3200) // the lifetime "4" read as 4 s: due for renewal after 3 s
  t.equal(await code(), 200)
  // The renewal is done once its login is logged (the answer read, the session in place).
  await until(() => renewals(rawLogs).logins === 2, 2000)
  t.same(
    seen,
    ['/login', '/refresh', '/login'],
    'the renewal without a token was followed by a login'
  )
  t.ok(rawLogs.some((line) => line.includes("the hub's refresh answer holds no token: logging in")))
  t.ok(
    rawLogs.some(
      (line) => line.includes('logged in to the hub') && line.includes('"expiresInSeconds":300')
    ),
    'no lifetime in the answer: five minutes'
  )

  clock.advance(299_000) // due again; no refresh token held now: a login, which fails
  t.equal(await code(), 200, 'the token in use still serves while its renewal fails')
  await until(() => rawLogs.some((line) => line.includes('hub token renewal failed')), 2000)
  t.equal(seen.length, 4)
  clock.advance(1000) // expired
  t.equal(
    await code(),
    'UPSTREAM_BAD_RESPONSE',
    "the failed login's error again, without another login so soon"
  )
  t.equal(seen.length, 4)
  clock.advance(10_000)
  t.equal(await code(), 'UPSTREAM_BAD_RESPONSE', 'a login answer cut short')
  clock.advance(10_000)
  t.equal(await code(), 'UPSTREAM_UNAVAILABLE', 'a login that gets no answer')
  t.same(seen, ['/login', '/refresh', '/login', '/login', '/login', '/login'])
})
