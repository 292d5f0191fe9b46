import t from 'tap'
import {
  SANDBOX_FIXTURES as F,
  SANDBOX_LOGIN_PATH,
  SANDBOX_PASSWORD,
  SANDBOX_REFRESH_PATH,
  SANDBOX_USERNAME,
  startSandbox
} from '../../src/sandbox/index.ts'
import { KEY, LOOKUP, call, qs, sandbox } from './helpers.ts'

// The modelled login and its renewal: the plain answer (the default, as
// before), and the envelope with a refresh token as the hub's public callers
// show it.

const ACCOUNT = { username: SANDBOX_USERNAME, password: SANDBOX_PASSWORD }
const BL_LIST = `${LOOKUP}/noblbc20/${qs({ npwp: F.taxpayer.npwp })}`

t.test('the plain answer by default: the token at the top, no refresh token', async (t) => {
  const sb = await sandbox(t)
  const login = await call(sb, 'POST', SANDBOX_LOGIN_PATH, { body: ACCOUNT })
  t.equal(login.status, 200)
  t.same(Object.keys(login.body as object), ['access_token', 'token_type', 'expires_in'])
  t.match(login.body, { access_token: /^sbx-session-/, token_type: 'Bearer', expires_in: 300 })
  const token = (login.body as { access_token: string }).access_token
  t.equal(
    (await call(sb, 'GET', BL_LIST, { headers: { ...KEY, authorization: `Bearer ${token}` } }))
      .status,
    200,
    'the token opens the lookups'
  )
  t.same(
    (await call(sb, 'POST', SANDBOX_LOGIN_PATH, { body: { ...ACCOUNT, password: 'wrong' } })).body,
    { message: 'Login gagal' }
  )
  t.equal((await call(sb, 'GET', SANDBOX_LOGIN_PATH)).status, 405)
  const refresh = await call(sb, 'POST', SANDBOX_REFRESH_PATH, {
    headers: { authorization: `Bearer ${token}` }
  })
  t.same(
    [refresh.status, refresh.body],
    [401, { message: 'Refresh token tidak valid atau kedaluwarsa' }],
    'an access token is no refresh token'
  )
})

t.test(
  'the envelope: a refresh token, renewed once each by a POST carrying it; expired or revoked, ' +
  'refused',
  async (t) => {
    let now = Date.now()
    const sb = await sandbox(t, {
      loginAnswer: 'envelope',
      loginTokenTtlMs: 900_000,
      refreshTokenTtlMs: 5000,
      now: () => now
    })
    const login = await call(sb, 'POST', `${SANDBOX_LOGIN_PATH}/`, { body: ACCOUNT })
    t.match(login.body, {
      status: 'success',
      message: 'Login berhasil',
      item: {
        access_token: /^sbx-session-/,
        expires_in: 900,
        refresh_expires_in: 0,
        refresh_token: /^sbx-refresh-/,
        token_type: 'bearer'
      }
    })
    const first = (login.body as { item: { refresh_token: string } }).item.refresh_token

    const renewed = await call(sb, 'POST', SANDBOX_REFRESH_PATH, {
      headers: { authorization: `bearer ${first}` }
    })
    t.match(renewed.body, {
      status: 'success',
      message: 'Token berhasil diperbarui',
      item: { access_token: /^sbx-session-/, refresh_token: /^sbx-refresh-/ }
    })
    const next = (renewed.body as { item: { refresh_token: string } }).item.refresh_token
    t.not(next, first, 'a new refresh token with the renewal')
    const again = await call(sb, 'POST', SANDBOX_REFRESH_PATH, {
      headers: { authorization: `Bearer ${first}` }
    })
    t.same(
      [again.status, again.body],
      [401, { status: 'failed', message: 'Refresh token tidak valid atau kedaluwarsa' }],
      'each refresh token renews once'
    )

    now += 5000
    t.equal(
      (
        await call(sb, 'POST', SANDBOX_REFRESH_PATH, {
          headers: { authorization: `Bearer ${next}` }
        })
      ).status,
      401,
      'an expired refresh token is refused'
    )
    const fresh = (await call(sb, 'POST', SANDBOX_LOGIN_PATH, { body: ACCOUNT })).body as {
      item: { refresh_token: string }
    }
    sb.revokeRefreshTokens()
    t.equal(
      (
        await call(sb, 'POST', SANDBOX_REFRESH_PATH, {
          headers: { authorization: `Bearer ${fresh.item.refresh_token}` }
        })
      ).status,
      401,
      'a revoked one too'
    )
    t.equal(
      (
        await call(sb, 'POST', SANDBOX_REFRESH_PATH, {
          headers: { authorization: fresh.item.refresh_token }
        })
      ).status,
      401,
      'and one without the bearer scheme'
    )
    t.same(
      (await call(sb, 'POST', SANDBOX_LOGIN_PATH, { body: { ...ACCOUNT, password: 'wrong' } }))
        .body,
      { status: 'failed', message: 'Login gagal' },
      'a refused login in the envelope'
    )
    t.same(
      [sb.count('login'), sb.count('refresh')],
      [3, 5],
      'recorded as the operations login and refresh'
    )
  }
)

t.test(
  'the addresses of the login and its renewal are options; a plain answer may carry a refresh ' +
  'token',
  async (t) => {
    const sb = await sandbox(t, {
      loginPath: '/nle-oauth/v1/user/login/',
      refreshPath: '/nle-oauth/v1/user/update-token',
      refreshTokens: true
    })
    t.equal(
      (await call(sb, 'POST', SANDBOX_LOGIN_PATH, { body: ACCOUNT })).status,
      404,
      'not at the default address'
    )
    const login = await call(sb, 'POST', '/nle-oauth/v1/user/login', { body: ACCOUNT })
    t.match(login.body, { access_token: /^sbx-session-/, refresh_token: /^sbx-refresh-/ })
    const refresh = await call(sb, 'POST', '/nle-oauth/v1/user/update-token/', {
      headers: {
        authorization: `Bearer ${(login.body as { refresh_token: string }).refresh_token}`
      }
    })
    t.match(refresh.body, { access_token: /^sbx-session-/, refresh_token: /^sbx-refresh-/ })
    for (const loginPath of ['auth/login', '/auth/login?x=1']) {
      await t.rejects(startSandbox({ loginPath }), {
        message: 'sandbox option loginPath must be an absolute path without query or spaces'
      })
    }
  }
)
