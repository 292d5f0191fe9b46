import { test } from 'tap'
import { SANDBOX_LOGIN_PATH, SANDBOX_PASSWORD } from '../../../src/sandbox/index.ts'
import { manualClock, until } from '../helper.ts'
import type { BuildOptions } from '../helper.ts'
import { routeUrl, buildHub, tokenHeader } from '../hubs.ts'
import type { Hub } from '../hubs.ts'

// Login mode against one hub (UPSTREAM_CREDENTIALS=login): the gateway logs
// in where the hub's profile says (login.path, under UPSTREAM_BASE_URL), reads
// the token, its lifetime and the refresh token where its login section says
// (plain, or the envelope), sends the token in the profile's header after its scheme,
// renews it before it expires (by its refresh token where the hub issues
// one, else by a new login) and logs in again when the hub refuses the
// refresh. The sandbox's tokens live 4 s on a clock the test moves, with
// the gateway's.

const LOOKUP = 'kontainerbc261'

/**
 * How many times the gateway logged in and renewed by refresh, from its log lines (written once the
 * session is in place).
 */
function renewals (rawLogs: string[]): { logins: number, refreshes: number } {
  return {
    logins: rawLogs.filter((line) => line.includes('logged in to the hub')).length,
    refreshes: rawLogs.filter((line) =>
      line.includes('renewed the hub token with the refresh token')
    ).length
  }
}

/** `env`: settings the hub needs besides its profile and the sandbox's addresses. */
export function loginSuite (hub: Hub, env: Record<string, string> = {}): void {
  const login = hub.profile.login ?? {}
  const refreshes = login.refreshTokenField !== undefined || login.refreshPath !== undefined
  const scheme = hub.profile.tokenScheme ?? 'Bearer'
  const header = tokenHeader(hub, LOOKUP) ?? 'authorization'

  const options = (clock: ReturnType<typeof manualClock>): BuildOptions => ({
    env: { UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '', ...env },
    // The gateway finds the login and its renewal where the profile says (login.path,
    // login.refreshPath), under UPSTREAM_BASE_URL. A profile that says nothing (the hub's document
    // publishes no login): the sandbox's own.
    profile: {
      login: {
        renewBeforeSeconds: 1,
        ...(login.path === undefined ? { path: SANDBOX_LOGIN_PATH } : {})
      }
    },
    sandbox: { loginTokenTtlMs: 4000, now: clock.now },
    clock: clock.now
  })

  test(`login against the ${hub.name} hub: one login, the token in ${header} after its scheme, ` +
    `renewed ${refreshes ? 'by its refresh token' : 'by a new login'} before it ` +
    'expires', async (t) => {
    const clock = manualClock()
    const { app, sandbox, rawLogs } = await buildHub(t, hub, options(clock))
    const lookup = (n: number | string) =>
      app.inject({ url: routeUrl(hub, LOOKUP, { blNo: `BL${n}` }) })
    const used = () =>
      sandbox.requests.filter((r) => r.operation === LOOKUP).map((r) => String(r.headers[header]))

    t.equal((await lookup(1)).statusCode, 200)
    t.equal(sandbox.count('login'), 1)
    t.match(
      used()[0],
      new RegExp(`^${scheme === '' ? '' : `${scheme} `}sbx-session-[0-9a-f]+$`),
      `the token of the login's answer, ${scheme === '' ? 'alone' : `after ${scheme}`}`
    )

    let issuedAt = clock.now()
    for (const round of [1, 2]) {
      // past renewal time (4 s less 1 s), before expiry
      clock.advance(issuedAt + 3200 - clock.now())
      t.equal(
        (await lookup(`R${round}`)).statusCode,
        200,
        `round ${round}: the token still in use meanwhile`
      )
      if (refreshes) await until(() => renewals(rawLogs).refreshes === round, 2000)
      else await until(() => renewals(rawLogs).logins === round + 1, 2000)
      issuedAt = clock.now()
      clock.advance(1000) // the previous token has expired now
      const before = sandbox.count(LOOKUP)
      t.equal((await lookup(`A${round}`)).statusCode, 200)
      t.equal(
        sandbox.count(LOOKUP),
        before + 1,
        `round ${round}: no 401 and retry: the token in use was renewed`
      )
    }
    t.equal(sandbox.count('refresh'), refreshes ? 2 : 0)
    t.equal(
      sandbox.count('login'),
      refreshes ? 1 : 3,
      refreshes ? 'renewed twice without a login' : 'each renewal a login'
    )
    t.equal(new Set(used()).size, 3, 'three tokens in turn')
    for (const secret of [
      ...new Set(used().map((value) => value.split(' ').at(-1) ?? '')),
      SANDBOX_PASSWORD
    ]) {
      t.notOk(
        rawLogs.some((line) => line.includes(secret)),
        `${secret.slice(0, 12)}… is in no log line`
      )
    }
  })

  if (!refreshes) return
  test(`login against the ${hub.name} hub: a refresh the hub refuses is followed by one ` +
    'login', async (t) => {
    const clock = manualClock()
    const { app, sandbox, rawLogs } = await buildHub(t, hub, options(clock))
    const lookup = (n: number | string) =>
      app.inject({ url: routeUrl(hub, LOOKUP, { blNo: `BL${n}` }) })
    t.equal((await lookup(1)).statusCode, 200)
    sandbox.revokeRefreshTokens()
    clock.advance(3200)
    t.equal((await lookup(2)).statusCode, 200)
    await until(() => renewals(rawLogs).logins === 2, 2000)
    t.equal(sandbox.count('refresh'), 1, 'one refresh, refused')
    clock.advance(1000)
    t.equal((await lookup(3)).statusCode, 200, "the new login's token in use")
    t.equal(sandbox.count('login'), 2)
  })
}
