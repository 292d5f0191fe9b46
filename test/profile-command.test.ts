import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { FROM_ENV_COMMAND } from '../src/config/removed-settings.ts'
import { resolveProfile } from '../src/profile/resolve.ts'
import { SANDBOX_API_KEY, SANDBOX_PASSWORD, SANDBOX_USERNAME } from '../src/sandbox/index.ts'
import { build } from './helper.ts'

// `npm run profile`, as the refusals of the removed settings and
// docs/hub.md write it: the command run by a shell, its output
// redirected to a file, which must then hold the profile and nothing else.

const ROOT = fileURLToPath(new URL('..', import.meta.url))

type TestLike = Parameters<Parameters<typeof test>[0]>[0]
interface Ran { file: string, stderr: string, status: number | null }

/** The documented command, its `> hub-profile.json` to a file of the test's, with `env` alone. */
function run (t: TestLike, command: string, env: Record<string, string>): Ran {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-profile-command-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'hub-profile.json')
  const shell = command.replace('> hub-profile.json', '> "$OUT"')
  const result = spawnSync('sh', ['-c', shell], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), OUT: file, ...env }
  })
  return { file, stderr: result.stderr, status: result.status }
}

/** An old configuration: the hub said by settings 1.0.0 removed. */
const OLD = {
  UPSTREAM_HUB_URL: 'https://hub.example.go.id',
  UPSTREAM_BASE_URL: 'https://base.example.go.id',
  UPSTREAM_PATH_SEGMENT: 'NLE',
  UPSTREAM_ENV: 'production',
  UPSTREAM_PARAM_PLACEMENT: 'path',
  UPSTREAM_API_KEY_HEADER: 'nle-api-key',
  UPSTREAM_OPERATIONS: JSON.stringify({
    kontainerbc25: { dateFormat: 'YYYY-MM-DD' },
    noblbc16: { paramNames: { npwp: 'NPWP' } }
  }),
  UPSTREAM_CREDENTIALS: 'login',
  UPSTREAM_LOGIN_URL: 'https://base.example.go.id/auth/login',
  UPSTREAM_LOGIN_REFRESH_URL: 'https://base.example.go.id/auth/refresh',
  UPSTREAM_LOGIN_BODY: JSON.stringify({ username: SANDBOX_USERNAME, password: SANDBOX_PASSWORD }),
  UPSTREAM_LOGIN_RENEW_BEFORE_SECONDS: '30',
  UPSTREAM_RETRIES: '0'
}

test('--from-env writes what an old configuration meant; the hub requests stay', async (t) => {
  t.equal(FROM_ENV_COMMAND, 'npm run --silent profile -- --from-env > hub-profile.json',
    'the command the refusals name')
  const { file, stderr, status } = run(t, FROM_ENV_COMMAND, OLD)
  t.equal(status, 0, stderr)
  const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  t.match(written, {
    name: 'documented-from-settings',
    prefixes: { lookup: '/V1/NLE/INT/AUTH', sp2: '/V3/NLE', booking: '/V3/NLE' },
    defaults: { apiKeyHeader: 'nle-api-key' },
    login: { path: '/auth/login', refreshPath: '/auth/refresh', renewBeforeSeconds: 30 },
    retries: { count: 0 },
    operations: {
      noblbc16: { params: { npwp: 'NPWP' }, path: 'noblbc16/{NPWP}' },
      kontainerbc25: { dateSent: 'YYYY-MM-DD', path: 'kontainerbc25/{tglBl}' }
    }
  }, 'the file holds the profile alone, pure JSON')
  t.notOk('body' in (written.login as object), 'a body of the documented shape: the default')
  const unset = ['UPSTREAM_OPERATIONS', 'UPSTREAM_PARAM_PLACEMENT', 'UPSTREAM_PATH_SEGMENT',
    'UPSTREAM_ENV', 'UPSTREAM_API_KEY_HEADER', 'UPSTREAM_LOGIN_URL', 'UPSTREAM_LOGIN_REFRESH_URL',
    'UPSTREAM_LOGIN_BODY', 'UPSTREAM_LOGIN_RENEW_BEFORE_SECONDS', 'UPSTREAM_RETRIES']
  t.ok(stderr.startsWith(`unset these settings, which the profile says now: ${unset.join(', ')}\n`))
  t.match(stderr, /set UPSTREAM_LOGIN_USERNAME to the login body's "username"/)
  t.notMatch(stderr, SANDBOX_PASSWORD, 'the account is never printed')

  // The new configuration: the settings that stay, and the file; the sandbox plays the same file.
  const { app, sandbox } = await build(t, {
    env: { UPSTREAM_PROFILE_FILE: file, UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '' },
    sandbox: { profile: file }
  })
  const lookups = [
    ['/v1/customs/bc16/bills-of-lading?npwp=012345678901000', 'noblbc16/012345678901000'],
    ['/v1/customs/bc25/containers?blDate=2024-01-05', 'kontainerbc25/2024-01-05'],
    ['/v1/customs/bc261/containers?blNo=MEDU123', 'kontainerbc261/MEDU123']
  ] as const
  for (const [url, path] of lookups) {
    t.equal((await app.inject({ url })).statusCode, 200, url)
    const sent = sandbox.requests.at(-1)
    t.equal(sent?.path, `/V1/NLE/INT/AUTH/${path}`, `${url}: the old address, values in the path`)
    t.same(sent?.query, {}, `${url}: no query string`)
    t.equal(sent?.headers['nle-api-key'], SANDBOX_API_KEY, `${url}: the key under the old header`)
    t.match(sent?.headers.authorization, /^Bearer sbx-session-/, `${url}: the login's token`)
  }
  const url = '/v1/bookings/BKG-20240301-0001/booked'
  const booked = await app.inject({ method: 'POST', url, payload: { booked: true } })
  t.equal(booked.statusCode, 200)
  t.match(sandbox.requests.at(-1), {
    method: 'POST',
    path: '/V3/NLE/DetilBooking/isBooked/',
    query: { idRequestBooking: 'BKG-20240301-0001' }
  }, 'the production booking prefix; the booked notification keeps its query')
  const body = { username: SANDBOX_USERNAME, password: SANDBOX_PASSWORD }
  const loggedIn = sandbox.requests.find(r => r.operation === 'login')
  t.match(loggedIn, { method: 'POST', path: '/auth/login', body },
    'the login where UPSTREAM_LOGIN_URL was, with the account')
  t.equal(sandbox.count('login'), 1)
})

test('without --from-env: the profile in force, whole, a file with the same digest', async (t) => {
  const shipped = fileURLToPath(new URL('../deploy/profiles/public-callers.json', import.meta.url))
  const hub = {
    UPSTREAM_HUB_URL: 'https://hub.example.go.id',
    UPSTREAM_BASE_URL: 'https://base.example.go.id',
    UPSTREAM_PROFILE_FILE: shipped
  }
  // A removed setting still set: the gateway would refuse it; the profile printed leaves it out.
  const { file, stderr, status } = run(t, 'npm run --silent profile > hub-profile.json',
    { ...hub, UPSTREAM_ENV: 'production' })
  t.equal(status, 0, stderr)
  t.match(stderr, /^warning: UPSTREAM_ENV: removed in 1\.0\.0, now said by the hub profile's/,
    'a removed setting still set: said on stderr, and left out')
  const config = { ...hub, UPSTREAM_CREDENTIALS: 'static' as const }
  const printed = resolveProfile({ ...config, UPSTREAM_PROFILE_FILE: file })
  const original = resolveProfile(config)
  t.equal(printed.digest, original.digest, 'the same behaviour')
  t.same([...printed.operations], [...original.operations])
  t.equal(printed.name, 'public-callers')
})
