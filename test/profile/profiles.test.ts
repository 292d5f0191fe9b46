import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import Ajv2020 from 'ajv/dist/2020.js'
import { test } from 'tap'
import { PROFILE_SCHEMA_PATH, renderProfileSchema } from '../../scripts/docs/profile-schema.ts'
import { OPERATIONS, type OperationId } from '../../src/catalogue/operations.ts'
import { ConfigError, loadConfig } from '../../src/config/load.ts'
import { FROM_ENV_COMMAND, REMOVED_SETTINGS } from '../../src/config/removed-settings.ts'
import { unknownSettings } from '../../src/config/unknown-settings.ts'
import { profileFromSettings } from '../../src/profile/from-settings.ts'
import { loadProfileFile, profileProblems } from '../../src/profile/load.ts'
import { loginBody } from '../../src/profile/login-body.ts'
import { resolveProfile, type ProfileInForce } from '../../src/profile/resolve.ts'
import { resolveOperations } from '../../src/upstream/resolve-operations.ts'
import { build, configProblems, writeTempFile } from '../helpers/helper.ts'

const ROOT = new URL('../../', import.meta.url)
const SHIPPED = ['deploy/profiles/documented.json', 'deploy/profiles/public-callers.json']

function problemsOf (file: string): string[] {
  try {
    loadProfileFile(file)
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

test('drift: the committed profile schema is what src/profile/schema.ts generates', async (t) => {
  const committed = await readFile(new URL(PROFILE_SCHEMA_PATH, ROOT), 'utf8').catch(
    () => undefined
  )
  t.ok(
    committed === renderProfileSchema(),
    `${PROFILE_SCHEMA_PATH} is out of date: run \`npm run openapi\` and commit the result`
  )
})

test('the shipped profiles are valid, for the gateway and for any JSON Schema ' +
  'validator', async (t) => {
  // The package's CommonJS default export, as Node's ESM loader presents it.
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ allErrors: true, strict: true })
  const validate = ajv.compile(JSON.parse(renderProfileSchema()) as object)
  for (const path of SHIPPED) {
    const file = fileURLToPath(new URL(path, ROOT))
    t.same(problemsOf(file), [], `${path}: the gateway finds no problem`)
    t.ok(
      validate(JSON.parse(await readFile(file, 'utf8'))),
      `${path}: ajv (strict): ${ajv.errorsText(validate.errors)}`
    )
  }
})

test('the schema lists every operation of the catalogue, each with the parameters it may ' +
  'take', async (t) => {
  const schema = JSON.parse(renderProfileSchema()) as {
    properties: {
      operations: { properties: Record<string, { properties: { params: { properties: object } } }> }
    }
  }
  const operations = schema.properties.operations.properties
  t.same(
    Object.keys(operations),
    OPERATIONS.map((op) => op.id)
  )
  t.same(
    Object.keys(operations.kontainerbc20?.properties.params.properties ?? {}),
    ['blDate', 'blNo'],
    'its own, then those a variant adds'
  )
  t.same(Object.keys(operations.BC20ByNoBL?.properties.params.properties ?? {}), [
    'blNo',
    'npwp',
    'blDate'
  ])
})

test('each problem names its place in the file and the rule, in words', async (t) => {
  t.same(
    profileProblems({
      name: 'my hub',
      prefixes: { lookup: 'V1/NLE/' },
      defaults: { apiKeyHeader: 'beacukai api key', dateSent: 'DDMMYYYY', nullString: ['null'] },
      operations: { kontainerbc99: {}, 'document_sp2/final': { params: { blNo: 'x' } } }
    }),
    [
      '$.name: must be a name of 1 to 64 letters, digits and ._-',
      '$.prefixes.lookup: must be an address prefix such as /V1/NLE/INT/AUTH: segments each ' +
      'after a /, no / at the end (or empty)',
      '$.defaults: unknown member "nullString" (known here: apiKeyHeader, tokenHeader, ' +
        'credentials, answerKey, dateSent, dateAnswered, errorFields, nullStrings, failure, ' +
        'notFound, timeouts)',
      '$.defaults.apiKeyHeader: must be one of the forms allowed: The name of the header that ' +
      'carries the API key, or several names: the key is sent under each',
      '$.defaults.dateSent: must be one of "YYYYMMDD", "YYYY-MM-DD"',
      '$.operations: unknown member "kontainerbc99" (known here: ' +
      `${OPERATIONS.map((op) => op.id).join(', ')})`,
      '$.operations["document_sp2/final"].params: unknown member "blNo" (known here: sp2Id)'
    ]
  )
  t.match(profileProblems({ name: 'x', operations: { BC20ByNoPib: { notFound: '404' } } }),
    [/^\$\.operations\.BC20ByNoPib: unknown member "notFound" \(known here: (?!.*notFound)/],
    'a record\'s 404 is always not found: notFound is for the lists')
  t.same(profileProblems({ operations: {} }), ['$: is missing its member "name"'])
  t.match(profileProblems([])[0], /^\$: must be an object/)
})

test("the rules a schema cannot say: placeholders, the route's path parameters, hub names, " +
  'regular expressions', async (t) => {
  t.same(
    profileProblems({
      name: 'x',
      operations: {
        BC20ByNoPib: {
          path: 'BC20ByNoPib/{npwp}x/{foo}/{nopib}/{nopib}/}',
          params: { npwp: 'npwp', pibNo: 'nopib' }
        },
        BC20ByNoBL: { params: { blNo: 'nobl', npwp: 'nobl' } },
        kontainerbc23: { params: { blDate: 'tglBl' } },
        noblbc16: { path: 'noblbc16/{noBl}' },
        'document_sp2/final': { failure: { codes: [{ match: '(', code: 'EMPTY' }] } }
      }
    }),
    [
      '$.operations.BC20ByNoPib.path: a placeholder must be a whole segment between slashes ' +
      '("{npwp}x")',
      '$.operations.BC20ByNoPib.path: {foo} names no parameter of this operation (its hub names: ' +
      'npwp, nopib; set `params` to take another)',
      '$.operations.BC20ByNoPib.path: {nopib} appears twice',
      '$.operations.BC20ByNoPib.path: "}" has a brace that opens no placeholder ({name} of a ' +
      'parameter)',
      '$.operations.BC20ByNoBL.params: two parameters have the hub name "nobl"',
      '$.operations.noblbc16.path: {noBl} names no parameter of this operation (its hub names: ' +
      'npwp; set `params` to take another)',
      '$.operations["document_sp2/final"].failure.codes[0].match: is not a regular expression ' +
      '(Invalid regular expression: /(/i: Unterminated group)'
    ]
  )
  t.same(
    profileProblems({ name: 'x', operations: { BC20ByNoPib: { params: { npwp: 'npwp' } } } }),
    [
      "$.operations.BC20ByNoPib.params: must include pibNo, a parameter of the route's path " +
      '(/v1/customs/bc20/declarations/:pibNo)'
    ]
  )
})

test('a file that cannot be read or is not JSON is one problem naming the setting and the ' +
  'file', async (t) => {
  t.match(problemsOf('/nonexistent/hub.json'), [
    /^UPSTREAM_PROFILE_FILE \(\/nonexistent\/hub\.json\): cannot be read \(ENOENT\)$/
  ])
  const notJson = writeTempFile(t, '{ "name": ')
  t.match(problemsOf(notJson), [/^UPSTREAM_PROFILE_FILE \(.*\): is not JSON \(/])
  const wrong = writeTempFile(
    t,
    JSON.stringify({ name: 'x', defaults: { tokenHeader: 'Auth Header' } })
  )
  t.same(problemsOf(wrong), [
    `UPSTREAM_PROFILE_FILE (${wrong}) $.defaults.tokenHeader: must be a header name: letters, ` +
    'digits and !#$%&\'*+.^_`|~- (no spaces or colons)'
  ])
})

function resolved (env: Record<string, string>): ProfileInForce {
  return resolveProfile(loadConfig(env))
}

function resolveProblems (env: Record<string, string>): string[] {
  try {
    resolved(env)
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

test('the documented profile is what the gateway does without one', async (t) => {
  const builtIn = resolved({})
  const documented = resolved({ UPSTREAM_PROFILE_FILE: fileURLToPath(new URL(SHIPPED[0]!, ROOT)) })
  t.same([...documented.operations], [...builtIn.operations], 'every operation alike')
  t.same(
    [documented.tokenScheme, documented.login, documented.stringValues],
    [builtIn.tokenScheme, builtIn.login, builtIn.stringValues]
  )
  t.equal(documented.digest, builtIn.digest, 'the same digest: the same behaviour')
  t.equal(builtIn.name, 'documented')
  t.equal(builtIn.source, 'built-in')
  const publicCallers = resolved({
    UPSTREAM_PROFILE_FILE: fileURLToPath(new URL(SHIPPED[1]!, ROOT))
  })
  t.not(publicCallers.digest, builtIn.digest)
})

test('old settings, written by --from-env, resolve as that hub written by hand', async (t) => {
  const old = {
    UPSTREAM_PATH_SEGMENT: 'NLE',
    UPSTREAM_ENV: 'production',
    UPSTREAM_PARAM_PLACEMENT: 'path',
    UPSTREAM_API_KEY_HEADER: 'beacukai-api-key',
    UPSTREAM_LOGIN_TOKEN_SCHEME: 'Token',
    UPSTREAM_TIMEZONE: '+08:00',
    UPSTREAM_OPERATIONS: JSON.stringify({
      kontainerbc20: {
        responseKey: 'Data Kontainer BC20',
        headers: ['authorization'],
        dateFormat: 'YYYY-MM-DD',
        headersTimeoutMs: 2500
      },
      noblbc16: { paramNames: { npwp: 'NPWP' }, cacheTtlSeconds: 5, bodyTimeoutMs: 700 }
    })
  }
  const written = profileFromSettings(old, undefined)
  t.same(written.problems, [])
  const order = Object.keys(REMOVED_SETTINGS)
  t.same(written.unset, Object.keys(old).sort((a, b) => order.indexOf(a) - order.indexOf(b)),
    'each setting set, to unset')
  const inPath = OPERATIONS.filter(op => op.params.length > 0 && op.id !== 'DetilBooking/isBooked')
  const hubName = (id: string, upstream: string) => id === 'noblbc16' ? 'NPWP' : upstream
  const paths = Object.fromEntries(inPath.map(op =>
    [op.id, { path: op.path + op.params.map(p => `{${hubName(op.id, p.upstream)}}`).join('/') }]))
  const byHand = writeTempFile(t, JSON.stringify({
    name: 'same',
    prefixes: { lookup: '/V1/NLE/INT/AUTH', sp2: '/V3/NLE', booking: '/V3/NLE' },
    tokenScheme: 'Token',
    timeZone: '+08:00',
    defaults: { apiKeyHeader: 'beacukai-api-key' },
    operations: {
      ...paths,
      kontainerbc20: {
        ...paths.kontainerbc20,
        answerKey: 'Data Kontainer BC20',
        credentials: ['token'],
        dateSent: 'YYYY-MM-DD',
        timeouts: { headersMs: 2500 }
      },
      noblbc16: {
        ...paths.noblbc16,
        params: { npwp: 'NPWP' },
        cacheTtlSeconds: 5,
        timeouts: { bodyMs: 700 }
      }
    }
  }))
  const writtenFile = writeTempFile(t, JSON.stringify(written.profile))
  const fromSettings = resolved({ UPSTREAM_PROFILE_FILE: writtenFile })
  const profile = resolved({ UPSTREAM_PROFILE_FILE: byHand })
  t.same([...fromSettings.operations], [...profile.operations])
  t.equal(fromSettings.digest, profile.digest, 'the same behaviour')
  t.equal(fromSettings.name, 'documented-from-settings')
  const op = (id: OperationId) => fromSettings.operations.get(id)
  t.equal(op('noblbc16')?.path, 'noblbc16/{NPWP}')
  t.equal(op('DetilBooking/isBooked')?.path, 'DetilBooking/isBooked/',
    'the booked notification keeps its query string')
  t.strictSame(op('kontainerbc20')?.timeouts, { headersMs: 2500, bodyMs: 10000 },
    'an operation\'s timeouts over the defaults\'')
  const atDefaults = {
    UPSTREAM_PATH_SEGMENT: 'HUB',
    UPSTREAM_ENV: 'development',
    UPSTREAM_RETRIES: '2'
  }
  t.same(profileFromSettings(atDefaults, undefined).profile, { name: 'documented' },
    'a setting at its old default said nothing, and writes nothing')
})

test('--from-env over a profile: where both said it (refused), the setting wins', async (t) => {
  const file = fileURLToPath(new URL(SHIPPED[1]!, ROOT))
  const base = loadProfileFile(file)
  const settings = { UPSTREAM_API_KEY_HEADER: 'x-key', UPSTREAM_RETRIES: '0' }
  const written = profileFromSettings(settings, base)
  t.equal(written.profile?.name, 'public-callers-from-settings')
  t.equal(written.profile?.defaults?.apiKeyHeader, 'x-key')
  t.same(written.profile?.retries, { count: 0 })
  t.same(written.notes, ['UPSTREAM_API_KEY_HEADER and the profile\'s defaults.apiKeyHeader both ' +
    'said it (the gateway refused that); the setting\'s value is written'])
  const wrong = { UPSTREAM_OPERATIONS: '{"nope":{}}', UPSTREAM_RETRIES: '1.5' }
  t.same(profileFromSettings(wrong, undefined).problems, [
    'UPSTREAM_RETRIES: must be a whole number in decimal digits (such as 64)',
    'UPSTREAM_OPERATIONS: unknown operation "nope"'
  ])
  t.match(profileFromSettings({ UPSTREAM_MAX_CONNECTIONS: '5000' }, undefined).problems,
    [/^the profile written from the settings: \$\.connections\.max: /])
})

test('a removed setting still set stops start-up, naming what says it now', async (t) => {
  const member = (setting: string, text: string) => `${setting}: removed in 1.0.0, now said by ` +
    `the hub profile's ${text} (${FROM_ENV_COMMAND} writes the profile your settings meant)`
  const removed = {
    UPSTREAM_ENV: 'production',
    UPSTREAM_RETRIES: '0',
    BREAKER_RESET_MS: '50',
    UPSTREAM_LOGIN_BODY_FILE: '/run/secrets/body',
    UPSTREAM_TIMEZONE: ''
  }
  t.same(configProblems(removed), [
    member('BREAKER_RESET_MS', 'breaker.resetMs'),
    member('UPSTREAM_ENV', 'prefixes.sp2 and prefixes.booking'),
    member('UPSTREAM_LOGIN_BODY_FILE', 'login.body, whose "{username}" and "{password}" ' +
      'UPSTREAM_LOGIN_USERNAME and UPSTREAM_LOGIN_PASSWORD fill'),
    member('UPSTREAM_RETRIES', 'retries.count')
  ], 'one line each, an empty value unset as for every setting')
  t.same(configProblems({ REDIS_PASSWORD_FILE: '/run/secrets/redis', CACHE_MAX_ENTRIES: '10' }), [
    'CACHE_MAX_ENTRIES: removed in 1.0.0; CACHE_MAX_BYTES charges each entry its bookkeeping, so ' +
      'it bounds their number too; unset it',
    'REDIS_PASSWORD_FILE: removed in 1.0.0; put the password in REDIS_URL (redis://user:PASSWORD@' +
      'host, percent-encoded), and give the URL as REDIS_URL_FILE to keep it in a secret'
  ])
  for (const setting of Object.keys(REMOVED_SETTINGS)) {
    const problems = configProblems({ [setting]: '1' })
    t.equal(problems.length, 1, `${setting}: one line`)
    t.ok(problems[0]?.startsWith(`${setting}: removed in 1.0.0`), setting)
  }
  t.same(unknownSettings({ UPSTREAM_ENV: 'production', REDIS_PASSWORD_FILE: 'x' }), [],
    'refused by name, not taken for a typo')
})

test('the login is the profile\'s: addresses, body, fields, scheme and lifetimes', async (t) => {
  const file = fileURLToPath(new URL(SHIPPED[1]!, ROOT))
  const hub = {
    UPSTREAM_HUB_URL: 'https://hub.example.go.id',
    UPSTREAM_BASE_URL: 'https://nle.example.go.id/api/',
    UPSTREAM_API_KEY: 'k',
    PLATFORM_ID: 'p',
    UPSTREAM_ACCESS_TOKEN: 't'
  }
  const login = {
    ...hub,
    UPSTREAM_CREDENTIALS: 'login',
    UPSTREAM_LOGIN_USERNAME: 'u',
    UPSTREAM_LOGIN_PASSWORD: 'p'
  }
  const callers = resolved({ ...login, UPSTREAM_PROFILE_FILE: file })
  t.strictSame(callers.loginAddresses, {
    url: 'https://nle.example.go.id/api/nle-oauth/v1/user/login',
    refreshUrl: 'https://nle.example.go.id/api/nle-oauth/v1/user/update-token'
  }, 'the paths under the base address, its own path kept')
  const { login: read } = callers
  t.strictSame([read.tokenField, read.expiresField, read.refreshTokenField, callers.tokenScheme],
    ['item.access_token', 'item.expires_in', 'item.refresh_token', 'Bearer'],
    'where the envelope keeps the token, its lifetime and the refresh token')
  t.strictSame([read.body, read.renewBeforeSeconds, read.minIntervalSeconds],
    [{ username: '{username}', password: '{password}' }, 60, 30],
    'the documented hub\'s body and lifetimes where it says none')

  const body = { auth: { user: '{username}', secret: '{password}' }, grant: 'password' }
  const own = writeTempFile(t, JSON.stringify({
    name: 'x',
    tokenScheme: '',
    login: {
      service: 'hub',
      path: '/auth/login/',
      body,
      renewBeforeSeconds: 5,
      minIntervalSeconds: 0
    }
  }))
  const hubLogin = resolved({ ...login, UPSTREAM_PROFILE_FILE: own })
  const hubUrl = 'https://hub.example.go.id/auth/login/'
  t.strictSame(hubLogin.loginAddresses, { url: hubUrl, refreshUrl: undefined },
    'under UPSTREAM_HUB_URL; no renewal address: each renewal a login')
  t.equal(loginBody(hubLogin.login.body, { username: 'me', password: '{username} "p"' }),
    '{"auth":{"user":"me","secret":"{username} \\"p\\""},"grant":"password"}',
    'the account in whole values, as JSON strings; a value holding a placeholder is the account\'s')
  const { renewBeforeSeconds, minIntervalSeconds } = hubLogin.login
  t.strictSame([hubLogin.tokenScheme, renewBeforeSeconds, minIntervalSeconds], ['', 5, 0])
  t.strictSame(resolved({ ...hub }).loginAddresses, { url: undefined, refreshUrl: undefined },
    'the documented hub publishes no login')

  const noPath = writeTempFile(t, JSON.stringify({ name: 'x', login: { tokenField: 'token' } }))
  const needed = (source: string) => 'UPSTREAM_CREDENTIALS: login needs the address of the ' +
    `hub's login, the profile's login.path (${source} gives none: the hub's document does not ` +
    'publish its login)'
  t.same(resolveProblems({ ...login, UPSTREAM_PROFILE_FILE: noPath }), [needed(noPath)])
  t.same(resolveProblems({ ...login }), [needed('the built-in profile')])
  const inText = { user: '{username}', pass: 'secret {password}' }
  t.same(profileProblems({ name: 'x', login: { body: inText } }),
    ['$.login.body: must hold "{password}" as a whole string value (where the password goes)'])
})

test('how the gateway calls the hub is the profile\'s, and a lookup\'s cache TTL', async (t) => {
  const builtIn = resolved({})
  const calls = (p: ProfileInForce) => [p.connections, p.timeouts, p.retries, p.breaker, p.timeZone]
  t.strictSame(calls(builtIn), [
    { max: 64, connectTimeoutMs: 3000 },
    { headersMs: 10000, bodyMs: 10000 },
    { count: 2, baseMs: 100, maxMs: 2000 },
    { errorPercentage: 50, volumeThreshold: 5, windowMs: 10000, resetMs: 10000 },
    '+07:00'
  ], 'the defaults of the settings they replace')
  const file = writeTempFile(t, JSON.stringify({
    name: 'x',
    timeZone: '-05:00',
    connections: { max: 8 },
    retries: { count: 0 },
    breaker: { resetMs: 50, volumeThreshold: 2 },
    defaults: { timeouts: { headersMs: 1500 } },
    operations: { noblbc20: { timeouts: { bodyMs: 400 }, cacheTtlSeconds: 0 } }
  }))
  const profile = resolved({ UPSTREAM_PROFILE_FILE: file })
  t.strictSame(calls(profile), [
    { max: 8, connectTimeoutMs: 3000 },
    { headersMs: 1500, bodyMs: 10000 },
    { count: 0, baseMs: 100, maxMs: 2000 },
    { errorPercentage: 50, volumeThreshold: 2, windowMs: 10000, resetMs: 50 },
    '-05:00'
  ], 'each member over the default')
  t.strictSame(profile.operations.get('noblbc20')?.timeouts, { headersMs: 1500, bodyMs: 400 })
  t.equal(profile.operations.get('noblbc20')?.cacheTtlSeconds, 0)
  t.equal(profile.operations.get('noblbc16')?.cacheTtlSeconds, undefined,
    'CACHE_TTL_SECONDS elsewhere')
  const ops = resolveOperations(loadConfig({ CACHE_TTL_SECONDS: '30' }), profile)
  const ttl = (id: OperationId) => ops.get(id)?.cacheTtlSeconds
  t.strictSame([ttl('noblbc20'), ttl('noblbc16'), ttl('DetilBooking')], [0, 30, 0],
    'an operation\'s own lifetime wins; a write is never cached')
  t.strictSame([ops.get('noblbc20')?.headersTimeout, ops.get('noblbc20')?.bodyTimeout], [1500, 400])
  const known = 'apiKeyHeader, tokenHeader, credentials, answerKey, dateSent, dateAnswered, ' +
    'errorFields, nullStrings, failure, timeouts, service, prefix, path, params'
  const wrongTtl = {
    name: 'x',
    timeZone: '+7',
    operations: { DetilBooking: { cacheTtlSeconds: 5 } }
  }
  t.same(profileProblems(wrongTtl), [
    '$.timeZone: must be a UTC offset written +HH:MM or -HH:MM (hours 00 to 14), such as +07:00',
    `$.operations.DetilBooking: unknown member "cacheTtlSeconds" (known here: ${known})`
  ], 'a write has no cache lifetime')
  t.not(profile.digest, builtIn.digest, 'what changes the calls changes the digest')
})

test('the server stops with one config error line per problem of the profile, naming its place ' +
  'in the file', async (t) => {
  const file = writeTempFile(
    t,
    JSON.stringify({
      name: 'hub',
      defaults: { dateSent: 'DDMMYYYY' },
      operations: { kontainerbc20: { path: 'kontainerbc20/{noBl}' } }
    })
  )
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      UPSTREAM_PROFILE_FILE: file
    },
    cwd: fileURLToPath(ROOT),
    stdio: ['ignore', 'ignore', 'pipe']
  })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.same(
    stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('config error:')),
    [
      `config error: UPSTREAM_PROFILE_FILE (${file}) $.defaults.dateSent: must be one of ` +
      '"YYYYMMDD", "YYYY-MM-DD"'
    ],
    'the schema first; the rules once it holds'
  )
})

test('an app with a profile it refuses does not start', async (t) => {
  const file = writeTempFile(
    t,
    JSON.stringify({ name: 'hub', operations: { kontainerbc20: { path: 'kontainerbc20/{noBl}' } } })
  )
  await t.rejects(
    build(t, { env: { UPSTREAM_PROFILE_FILE: file } }),
    new ConfigError([
      `UPSTREAM_PROFILE_FILE (${file}) $.operations.kontainerbc20.path: {noBl} names no ` +
      'parameter of this operation (its hub names: tglBl; set `params` to take another)'
    ])
  )
})

test('the words of the other rules: empty, too long, too many, twice', async (t) => {
  t.same(
    profileProblems({
      name: 'x',
      description: 'd'.repeat(2001),
      defaults: {
        apiKeyHeader: [],
        answerKey: '',
        nullStrings: ['null', 'null'],
        errorFields: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i']
      },
      operations: { DetilBooking: { apiKeyHeader: ['a', 'b', 'c', 'd', 'e'] } }
    }),
    [
      '$.description: is longer than the 2000 characters allowed',
      '$.defaults.apiKeyHeader: must be one of the forms allowed: The name of the header that ' +
      'carries the API key, or several names: the key is sent under each',
      '$.defaults.answerKey: must not be empty: Where the data is in the answer: the member ' +
      'holding the list (or the record), or `*` for the answer itself when it is an array, else ' +
      'its only array-valued member. In `defaults`, only for the operations that answer a list',
      '$.defaults.errorFields: holds more than the 8 items allowed',
      '$.defaults.nullStrings: holds the same item twice',
      '$.operations.DetilBooking.apiKeyHeader: must be one of the forms allowed: The name of the ' +
      'header that carries the API key, or several names: the key is sent under each'
    ]
  )
  t.same(profileProblems({ name: 'x', defaults: { errorFields: [] } }), [
    '$.defaults.errorFields: must hold at least 1 item'
  ])
})
