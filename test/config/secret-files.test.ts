import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'tap'
import { ConfigError, loadConfig } from '../../src/config/load.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { SECRET_SETTINGS } from '../../src/config/secret-files.ts'
import { BUILT_IN } from '../../src/profile/built-in.ts'
import { loginBody } from '../../src/profile/login-body.ts'
import { SANDBOX_API_KEY, SANDBOX_PASSWORD, SANDBOX_USERNAME } from '../../src/sandbox/index.ts'
import { build, configProblems as problemsOf } from '../helpers/helper.ts'

type TestLike = Parameters<Parameters<typeof test>[0]>[0]

/**
 * A directory for the test's secret files, removed in teardown; `file(name, text)` writes one and
 * returns its path.
 */
function secretsDir (t: TestLike) {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-secrets-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return {
    dir,
    file (name: string, text: string | Buffer): string {
      const path = join(dir, name)
      writeFileSync(path, text)
      return path
    }
  }
}

/** A configured hub, static mode, with everything it requires. */
const HUB = {
  UPSTREAM_HUB_URL: 'https://hub.example.go.id',
  UPSTREAM_BASE_URL: 'https://base.example.go.id',
  UPSTREAM_API_KEY: 'k',
  UPSTREAM_ACCESS_TOKEN: 't',
  PLATFORM_ID: 'PLT00001'
}

/** An example value for each secret setting, as a file would hold it. */
const VALUES: Record<typeof SECRET_SETTINGS[number], string> = {
  UPSTREAM_API_KEY: 'key with an inner space',
  UPSTREAM_ACCESS_TOKEN: 'token-3c5e',
  UPSTREAM_LOGIN_USERNAME: 'hub-user',
  UPSTREAM_LOGIN_PASSWORD: 'p@ss:w/rd %20',
  REDIS_URL: 'redis://gateway:redis-pw-90ab@redis:6379',
  REDIS_SENTINEL_PASSWORD: 'sentinel-pw-11c2'
}

test('each secret setting X may be given as X_FILE: read at start-up, its trailing line break ' +
  'dropped', async (t) => {
  const { file } = secretsDir(t)
  t.same(
    [...SECRET_SETTINGS].sort(),
    Object.keys(VALUES).sort(),
    'every secret setting has an example here'
  )
  // The file's own line ending, whichever the editor or `echo` wrote; what is inside the value
  // stays.
  const endings = ['\n', '\r\n', '', '\n\n']
  const env: Record<string, string> = {
    ...HUB,
    UPSTREAM_API_KEY: '',
    UPSTREAM_ACCESS_TOKEN: '',
    UPSTREAM_CREDENTIALS: 'login',
    REDIS_SENTINELS: 'sentinel-1:26379'
  }
  for (const [i, name] of SECRET_SETTINGS.entries()) {
    env[`${name}_FILE`] = file(name, `${VALUES[name]}${endings[i % endings.length]}`)
  }
  const config = loadConfig(env)
  t.equal(config.UPSTREAM_API_KEY, VALUES.UPSTREAM_API_KEY)
  t.equal(config.UPSTREAM_LOGIN_USERNAME, VALUES.UPSTREAM_LOGIN_USERNAME)
  t.equal(
    config.UPSTREAM_LOGIN_PASSWORD,
    VALUES.UPSTREAM_LOGIN_PASSWORD,
    'what a password may hold, unchanged'
  )
  t.equal(config.REDIS_SENTINEL_PASSWORD, VALUES.REDIS_SENTINEL_PASSWORD)
  t.equal(config.REDIS_URL, VALUES.REDIS_URL, 'the address with its password, from one file')
  t.equal(
    config.UPSTREAM_ACCESS_TOKEN,
    undefined,
    "the access token's file is only checked: static mode re-reads it while running (rotation)"
  )
  t.equal(config.UPSTREAM_ACCESS_TOKEN_FILE, env.UPSTREAM_ACCESS_TOKEN_FILE, 'its path kept')
  const resolved = resolveConfig(env)
  const account =
    resolved.UPSTREAM_CREDENTIALS === 'login'
      ? { username: resolved.UPSTREAM_LOGIN_USERNAME, password: resolved.UPSTREAM_LOGIN_PASSWORD }
      : undefined
  t.same(
    account && JSON.parse(loginBody(BUILT_IN.login.body, account)),
    { username: VALUES.UPSTREAM_LOGIN_USERNAME, password: VALUES.UPSTREAM_LOGIN_PASSWORD },
    "the login body: the profile's, with the user name and password"
  )
})

test('a setting given both as itself and as its file refuses the start, naming both', async (t) => {
  const { file } = secretsDir(t)
  for (const name of SECRET_SETTINGS) {
    const problems = problemsOf({
      [name]: VALUES[name],
      [`${name}_FILE`]: file(name, VALUES[name])
    })
    t.ok(problems.includes(`${name}_FILE: set either it or ${name}, not both`), name, { problems })
  }
  t.same(
    problemsOf({ UPSTREAM_API_KEY: '  ', UPSTREAM_API_KEY_FILE: file('key', 'k') }),
    [],
    'an empty variable counts as unset, as for every setting'
  )
})

test('a secret file that cannot be used: one line naming the setting and the path, never the ' +
  'content', async (t) => {
  const { dir, file } = secretsDir(t)
  const missing = join(dir, 'missing')
  t.same(problemsOf({ UPSTREAM_API_KEY_FILE: missing }), [
    `UPSTREAM_API_KEY_FILE: cannot read ${missing} (no such file)`
  ])
  const sentinels = { REDIS_SENTINELS: 's:26379', REDIS_URL: 'redis://m' }
  t.same(
    problemsOf({ ...sentinels, REDIS_SENTINEL_PASSWORD_FILE: dir }),
    [
      `REDIS_SENTINEL_PASSWORD_FILE: ${dir} is not a file but a directory ` +
        '(name the file inside it)'
    ],
    "a mounted Secret's directory instead of its file"
  )
  t.same(problemsOf({ UPSTREAM_LOGIN_PASSWORD_FILE: `${file('parent', 'x')}/password` }), [
    `UPSTREAM_LOGIN_PASSWORD_FILE: cannot read ${join(dir, 'parent')}/password (a part of the ` +
    'path is not a directory)'
  ])
  const empty = file('empty', '\n')
  t.same(
    problemsOf({ UPSTREAM_LOGIN_USERNAME_FILE: empty }),
    [`UPSTREAM_LOGIN_USERNAME_FILE: ${empty} is empty`],
    'an empty file is no credential'
  )
  const large = file('large', Buffer.alloc(65 * 1024, 'a'))
  t.same(problemsOf({ UPSTREAM_API_KEY_FILE: large }), [
    `UPSTREAM_API_KEY_FILE: ${large} is larger than 64 KiB: not a secret of the gateway`
  ])
  t.same(
    problemsOf({ UPSTREAM_ACCESS_TOKEN_FILE: missing }),
    [`UPSTREAM_ACCESS_TOKEN_FILE: cannot read ${missing} (no such file)`],
    'the re-read token file is checked at start-up too'
  )

  // A value the file holds that the setting's rule refuses: said so, the content not repeated.
  const password = 'hunter2-hunter2'
  const problems = [
    ...problemsOf({ REDIS_URL_FILE: file('redis-url', `http://gateway:${password}@redis\n`) }),
    ...problemsOf({ ...HUB, UPSTREAM_API_KEY: '', UPSTREAM_API_KEY_FILE: file('key', '\n\n') })
  ]
  t.match(problems, [
    /^REDIS_URL \(from REDIS_URL_FILE\): must be redis:\/\/\[user:password@\]host/,
    /^UPSTREAM_API_KEY_FILE: .* is empty$/
  ])
  t.notMatch(problems.join('\n'), password, 'the error lines do not repeat what the file holds')
})

test('the server refuses to start on a secret file it cannot read, with one line', async (t) => {
  const { dir } = secretsDir(t)
  const missing = join(dir, 'hub-api-key')
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      ...HUB,
      UPSTREAM_API_KEY: '',
      UPSTREAM_API_KEY_FILE: missing,
      UPSTREAM_ACCESS_TOKEN: 'tok-live-77aa'
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.same(output.trim().split('\n'), [
    `config error: UPSTREAM_API_KEY_FILE: cannot read ${missing} (no such file)`
  ])
})

test('the login\'s credentials: a user name with a password', async (t) => {
  const login = { ...HUB, UPSTREAM_ACCESS_TOKEN: '', UPSTREAM_CREDENTIALS: 'login' }
  t.same(problemsOf({ ...login, UPSTREAM_LOGIN_USERNAME: 'u', UPSTREAM_LOGIN_PASSWORD: 'p' }), [])
  t.same(problemsOf({ ...login, UPSTREAM_LOGIN_USERNAME: 'u' }), [
    'UPSTREAM_LOGIN_PASSWORD: is required with UPSTREAM_LOGIN_USERNAME'
  ])
  t.same(problemsOf({ ...login, UPSTREAM_LOGIN_PASSWORD: 'p' }), [
    'UPSTREAM_LOGIN_USERNAME: is required with UPSTREAM_LOGIN_PASSWORD'
  ])
  const required = 'UPSTREAM_LOGIN_USERNAME: is required when UPSTREAM_CREDENTIALS=login, with ' +
    'UPSTREAM_LOGIN_PASSWORD (or their *_FILE)'
  t.same(problemsOf(login), [required])
  t.match(problemsOf({ ...login, UPSTREAM_LOGIN_BODY: '{"user":"u"}' }),
    [/^UPSTREAM_LOGIN_BODY: removed in 1\.0\.0, now said by the hub profile's login\.body/],
    'a body of its own: the profile\'s login.body now, the account in the settings')

  // On the sandbox: a setting or a file of the environment's replaces the sandbox's.
  const sandbox = {
    UPSTREAM_HUB_URL: 'http://127.0.0.1:4010',
    UPSTREAM_BASE_URL: 'http://127.0.0.1:4010',
    UPSTREAM_API_KEY: 'k',
    PLATFORM_ID: 'SBX',
    UPSTREAM_LOGIN_USERNAME: SANDBOX_USERNAME,
    UPSTREAM_LOGIN_PASSWORD: SANDBOX_PASSWORD
  }
  const { file } = secretsDir(t)
  const fromFile = resolveConfig(
    {
      UPSTREAM_CREDENTIALS: 'login',
      UPSTREAM_LOGIN_USERNAME: 'mine',
      UPSTREAM_LOGIN_PASSWORD_FILE: file('password', 'from-file\n')
    },
    { sandbox }
  )
  const account = fromFile.UPSTREAM_CREDENTIALS === 'login'
    ? [fromFile.UPSTREAM_LOGIN_USERNAME, fromFile.UPSTREAM_LOGIN_PASSWORD]
    : undefined
  t.same(account, ['mine', 'from-file'], 'a password file replaces the sandbox\'s password')
  const none = { ...sandbox, UPSTREAM_LOGIN_PASSWORD: '', UPSTREAM_LOGIN_USERNAME: '' }
  t.throws(() => resolveConfig({ UPSTREAM_CREDENTIALS: 'login' }, { sandbox: none }),
    new ConfigError([required]),
    'a sandbox without credentials: refused, not a login without them')
})

test('REDIS_PASSWORD is removed: the password is part of REDIS_URL', async (t) => {
  const url = 'rediss://gateway:p%40ss%3Aw%2Frd%25@redis.internal:6380/2'
  t.equal(loadConfig({ REDIS_URL: url }).REDIS_URL, url, 'percent-encoded in the userinfo')
  t.same(problemsOf({ REDIS_URL: 'redis://gateway@redis', REDIS_PASSWORD: 'pw' }), [
    'REDIS_PASSWORD: removed in 1.0.0; put the password in REDIS_URL ' +
      '(redis://user:PASSWORD@host, percent-encoded), and give the URL as REDIS_URL_FILE to keep ' +
      'it in a secret'
  ])
})

test("the login's user name and password, from files, reach the hub and no log line or " +
  'response', async (t) => {
  const { file } = secretsDir(t)
  const { app, sandbox, rawLogs } = await build(t, {
    env: {
      UPSTREAM_CREDENTIALS: 'login',
      UPSTREAM_ACCESS_TOKEN: '',
      UPSTREAM_LOGIN_USERNAME: '',
      UPSTREAM_LOGIN_PASSWORD: '',
      UPSTREAM_LOGIN_USERNAME_FILE: file('username', `${SANDBOX_USERNAME}\n`),
      UPSTREAM_LOGIN_PASSWORD_FILE: file('password', `${SANDBOX_PASSWORD}\n`),
      UPSTREAM_API_KEY: '',
      UPSTREAM_API_KEY_FILE: file('api-key', `${SANDBOX_API_KEY}\n`)
    },
    logLevel: 'trace'
  })
  const res = await app.inject({ url: '/v1/customs/bc261/containers?blNo=BL1' })
  t.equal(
    res.statusCode,
    200,
    'logged in with the credentials of the files, and sent the key of its file'
  )
  t.same(sandbox.requests.find((r) => r.operation === 'login')?.body, {
    username: SANDBOX_USERNAME,
    password: SANDBOX_PASSWORD
  })
  const answers = [
    res,
    await app.inject({ url: '/health/ready' }),
    await app.inject({ url: '/metrics' }),
    await app.inject({ url: '/openapi.json' })
  ]
  // A careless log of the whole configuration, as a debugging session might add.
  app.log.info({ config: app.config }, 'careless')
  const seen =
    rawLogs.join('\n') + answers.map((r) => r.body + JSON.stringify(r.headers)).join('\n')
  t.ok(rawLogs.some((line) => line.includes('careless')))
  for (const secret of [SANDBOX_PASSWORD, SANDBOX_API_KEY]) {
    t.notOk(seen.includes(secret), `${secret.slice(0, 6)}… ` + 'is in no log line and no response')
  }
  t.notOk(
    rawLogs.some((line) => line.includes(`"${SANDBOX_USERNAME}"`)),
    'nor the user name'
  )
})
