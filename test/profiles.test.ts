import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import Ajv2020 from 'ajv/dist/2020.js'
import { test } from 'tap'
import { PROFILE_SCHEMA_PATH, renderProfileSchema } from '../scripts/docs/profile-schema.ts'
import { OPERATIONS } from '../src/catalogue/operations.ts'
import { ConfigError, loadConfig } from '../src/config/load.ts'
import { loadProfileFile, profileProblems } from '../src/profile/load.ts'
import { resolveProfile, type ProfileInForce } from '../src/profile/resolve.ts'
import { build, writeTempFile } from './helper.ts'

const ROOT = new URL('../', import.meta.url)
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
  const committed = await readFile(new URL(PROFILE_SCHEMA_PATH, ROOT), 'utf8').catch(() => undefined)
  t.ok(committed === renderProfileSchema(), `${PROFILE_SCHEMA_PATH} is out of date: run \`npm run openapi\` and commit the result`)
})

test('the shipped profiles are valid, for the gateway and for any JSON Schema validator', async (t) => {
  // The package's CommonJS default export, as Node's ESM loader presents it.
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ allErrors: true, strict: true })
  const validate = ajv.compile(JSON.parse(renderProfileSchema()) as object)
  for (const path of SHIPPED) {
    const file = fileURLToPath(new URL(path, ROOT))
    t.same(problemsOf(file), [], `${path}: the gateway finds no problem`)
    t.ok(validate(JSON.parse(await readFile(file, 'utf8'))), `${path}: ajv (strict): ${ajv.errorsText(validate.errors)}`)
  }
})

test('the schema lists every operation of the catalogue, each with the parameters it may take', async (t) => {
  const schema = JSON.parse(renderProfileSchema()) as { properties: { operations: { properties: Record<string, { properties: { params: { properties: object } } }> } } }
  const operations = schema.properties.operations.properties
  t.same(Object.keys(operations), OPERATIONS.map(op => op.id))
  t.same(Object.keys(operations.kontainerbc20?.properties.params.properties ?? {}), ['blDate', 'blNo'], 'its own, then those a variant adds')
  t.same(Object.keys(operations.BC20ByNoBL?.properties.params.properties ?? {}), ['blNo', 'npwp', 'blDate'])
})

test('each problem names its place in the file and the rule, in words', async (t) => {
  t.same(profileProblems({
    name: 'my hub',
    prefixes: { lookup: 'V1/NLE/' },
    defaults: { apiKeyHeader: 'beacukai api key', dateSent: 'DDMMYYYY', nullString: ['null'] },
    operations: { kontainerbc99: {}, 'document_sp2/final': { params: { blNo: 'x' } } }
  }), [
    '$.name: must be a name of 1 to 64 letters, digits and ._-',
    '$.prefixes.lookup: must be an address prefix such as /V1/NLE/INT/AUTH: segments each after a /, no / at the end (or empty)',
    '$.defaults: unknown member "nullString" (known here: apiKeyHeader, tokenHeader, ' +
      'credentials, answerKey, dateSent, dateAnswered, errorFields, nullStrings, failure, ' +
      'notFound)',
    '$.defaults.apiKeyHeader: must be one of the forms allowed: The name of the header that carries the API key, or several names: the key is sent under each',
    '$.defaults.dateSent: must be one of "YYYYMMDD", "YYYY-MM-DD"',
    `$.operations: unknown member "kontainerbc99" (known here: ${OPERATIONS.map(op => op.id).join(', ')})`,
    '$.operations["document_sp2/final"].params: unknown member "blNo" (known here: sp2Id)'
  ])
  t.match(profileProblems({ name: 'x', operations: { BC20ByNoPib: { notFound: '404' } } }),
    [/^\$\.operations\.BC20ByNoPib: unknown member "notFound" \(known here: (?!.*notFound)/],
    'a record\'s 404 is always not found: notFound is for the lists')
  t.same(profileProblems({ operations: {} }), ['$: is missing its member "name"'])
  t.match(profileProblems([])[0], /^\$: must be an object/)
})

test('the rules a schema cannot say: placeholders, the route\'s path parameters, hub names, regular expressions', async (t) => {
  t.same(profileProblems({
    name: 'x',
    operations: {
      BC20ByNoPib: { path: 'BC20ByNoPib/{npwp}x/{foo}/{nopib}/{nopib}/}', params: { npwp: 'npwp', pibNo: 'nopib' } },
      BC20ByNoBL: { params: { blNo: 'nobl', npwp: 'nobl' } },
      kontainerbc23: { params: { blDate: 'tglBl' } },
      noblbc16: { path: 'noblbc16/{noBl}' },
      'document_sp2/final': { failure: { codes: [{ match: '(', code: 'EMPTY' }] } }
    }
  }), [
    '$.operations.BC20ByNoPib.path: a placeholder must be a whole segment between slashes ("{npwp}x")',
    '$.operations.BC20ByNoPib.path: {foo} names no parameter of this operation (its hub names: npwp, nopib; set `params` to take another)',
    '$.operations.BC20ByNoPib.path: {nopib} appears twice',
    '$.operations.BC20ByNoPib.path: "}" has a brace that opens no placeholder ({name} of a parameter)',
    '$.operations.BC20ByNoBL.params: two parameters have the hub name "nobl"',
    '$.operations.noblbc16.path: {noBl} names no parameter of this operation (its hub names: npwp; set `params` to take another)',
    '$.operations["document_sp2/final"].failure.codes[0].match: is not a regular expression (Invalid regular expression: /(/i: Unterminated group)'
  ])
  t.same(profileProblems({ name: 'x', operations: { BC20ByNoPib: { params: { npwp: 'npwp' } } } }),
    ['$.operations.BC20ByNoPib.params: must include pibNo, a parameter of the route\'s path (/v1/customs/bc20/declarations/:pibNo)'])
})

test('a file that cannot be read or is not JSON is one problem naming the setting and the file', async (t) => {
  t.match(problemsOf('/nonexistent/hub.json'), [/^UPSTREAM_PROFILE_FILE \(\/nonexistent\/hub\.json\): cannot be read \(ENOENT\)$/])
  const notJson = writeTempFile(t, '{ "name": ')
  t.match(problemsOf(notJson), [/^UPSTREAM_PROFILE_FILE \(.*\): is not JSON \(/])
  const wrong = writeTempFile(t, JSON.stringify({ name: 'x', defaults: { tokenHeader: 'Auth Header' } }))
  t.same(problemsOf(wrong), [`UPSTREAM_PROFILE_FILE (${wrong}) $.defaults.tokenHeader: must be a header name: letters, digits and !#$%&'*+.^_\`|~- (no spaces or colons)`])
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
  t.same([documented.tokenScheme, documented.login, documented.stringValues], [builtIn.tokenScheme, builtIn.login, builtIn.stringValues])
  t.equal(documented.digest, builtIn.digest, 'the same digest: the same behaviour')
  t.equal(builtIn.name, 'documented')
  t.equal(builtIn.source, 'built-in')
  const publicCallers = resolved({ UPSTREAM_PROFILE_FILE: fileURLToPath(new URL(SHIPPED[1]!, ROOT)) })
  t.not(publicCallers.digest, builtIn.digest)
})

test('the single-purpose settings are shorthand: the same hub said by settings or by a profile resolves alike', async (t) => {
  const settings = resolved({
    UPSTREAM_PATH_SEGMENT: 'NLE',
    UPSTREAM_ENV: 'production',
    UPSTREAM_PARAM_PLACEMENT: 'path',
    UPSTREAM_API_KEY_HEADER: 'beacukai-api-key',
    UPSTREAM_LOGIN_TOKEN_SCHEME: 'Token',
    UPSTREAM_OPERATIONS: JSON.stringify({ kontainerbc20: { responseKey: 'Data Kontainer BC20', headers: ['authorization'], dateFormat: 'YYYY-MM-DD' }, noblbc16: { paramNames: { npwp: 'NPWP' } } })
  })
  const paths = Object.fromEntries(OPERATIONS.filter(op => op.params.length > 0 && op.id !== 'DetilBooking/isBooked').map(op => [op.id, { path: op.path + op.params.map(p => `{${op.id === 'noblbc16' ? 'NPWP' : p.upstream}}`).join('/') }]))
  const file = writeTempFile(t, JSON.stringify({
    name: 'same',
    prefixes: { lookup: '/V1/NLE/INT/AUTH', sp2: '/V3/NLE', booking: '/V3/NLE' },
    tokenScheme: 'Token',
    defaults: { apiKeyHeader: 'beacukai-api-key' },
    operations: {
      ...paths,
      kontainerbc20: { ...paths.kontainerbc20, answerKey: 'Data Kontainer BC20', credentials: ['token'], dateSent: 'YYYY-MM-DD' },
      noblbc16: { ...paths.noblbc16, params: { npwp: 'NPWP' } }
    }
  }))
  const profile = resolved({ UPSTREAM_PROFILE_FILE: file })
  t.same([...profile.operations], [...settings.operations])
  t.equal(profile.digest, settings.digest)
  t.equal(settings.operations.get('noblbc16')?.path, 'noblbc16/{NPWP}')
  t.equal(settings.operations.get('DetilBooking/isBooked')?.path, 'DetilBooking/isBooked/', 'the booked notification keeps its query string')
})

test('a profile and a setting saying the same thing: start-up refuses, naming both', async (t) => {
  const file = fileURLToPath(new URL(SHIPPED[1]!, ROOT))
  const keep = 'keep one of them (unset the setting, or remove that member of the profile)'
  t.same(resolveProblems({
    UPSTREAM_PROFILE_FILE: file,
    UPSTREAM_API_KEY_HEADER: 'x-key',
    UPSTREAM_PATH_SEGMENT: 'NLE',
    UPSTREAM_ENV: 'production',
    UPSTREAM_PARAM_PLACEMENT: 'path',
    UPSTREAM_LOGIN_TOKEN_SCHEME: 'Token',
    UPSTREAM_LOGIN_TOKEN_FIELD: 'token',
    UPSTREAM_LOGIN_EXPIRES_FIELD: 'ttl',
    UPSTREAM_OPERATIONS: JSON.stringify({ kontainerbc20: { responseKey: 'k', dateFormat: 'YYYY-MM-DD', headers: ['apiKey'], paramNames: { blDate: 'date' } }, BC20ByNoBL: { paramNames: { blNo: 'bl' } }, noblbc20: { cacheTtlSeconds: 5 } })
  }), [
    `UPSTREAM_API_KEY_HEADER: the profile (${file}) says the same at $.defaults.apiKeyHeader; ${keep}`,
    `UPSTREAM_PATH_SEGMENT: the profile (${file}) says the same at $.prefixes.lookup; ${keep}`,
    `UPSTREAM_ENV: the profile (${file}) says the same at $.prefixes.sp2; ${keep}`,
    `UPSTREAM_PARAM_PLACEMENT: the profile (${file}) says the same at $.operations.noblbc16.path; ${keep}`,
    `UPSTREAM_LOGIN_TOKEN_SCHEME: the profile (${file}) says the same at $.tokenScheme; ${keep}`,
    `UPSTREAM_LOGIN_TOKEN_FIELD: the profile (${file}) says the same at $.login.tokenField; ${keep}`,
    `UPSTREAM_LOGIN_EXPIRES_FIELD: the profile (${file}) says the same at $.login.expiresField; ${keep}`,
    `UPSTREAM_OPERATIONS.kontainerbc20.responseKey: the profile (${file}) says the same at $.defaults.answerKey; ${keep}`,
    `UPSTREAM_OPERATIONS.kontainerbc20.paramNames: the profile (${file}) says the same at $.operations.kontainerbc20.params; ${keep}`,
    `UPSTREAM_OPERATIONS.kontainerbc20.dateFormat: the profile (${file}) says the same at $.defaults.dateSent; ${keep}`,
    `UPSTREAM_OPERATIONS.BC20ByNoBL.paramNames: the profile (${file}) says the same at $.operations.BC20ByNoBL.params; ${keep}`
  ], 'cacheTtlSeconds and headers are the profile\'s to leave alone here')
  t.same(resolveProblems({ UPSTREAM_PROFILE_FILE: file, UPSTREAM_API_KEY_HEADER: 'customs-api-key', UPSTREAM_PATH_SEGMENT: 'HUB', UPSTREAM_ENV: 'development', UPSTREAM_PARAM_PLACEMENT: 'query' }), [],
    'a setting at its default says nothing (.env.example lists them so)')
  const onlyLookups = writeTempFile(t, JSON.stringify({ name: 'x', prefixes: { lookup: '/V1/NLE/INT/AUTH' }, operations: { DetilBooking: { prefix: '/v2' } } }))
  t.same(resolveProblems({ UPSTREAM_PROFILE_FILE: onlyLookups, UPSTREAM_ENV: 'production' }), [`UPSTREAM_ENV: the profile (${onlyLookups}) says the same at $.operations.DetilBooking.prefix; ${keep}`], 'UPSTREAM_ENV decides the SP2 and booking prefixes')
  const noPrefix = writeTempFile(t, JSON.stringify({ name: 'x', prefixes: { lookup: '/V1/NLE/INT/AUTH' } }))
  t.same(resolveProblems({ UPSTREAM_PROFILE_FILE: noPrefix, UPSTREAM_ENV: 'production' }), [], 'but not the lookups\'')
  t.same(resolveProblems({ UPSTREAM_OPERATIONS: '{"nope":{}}' }).map(p => p.split(' (')[0]), ['UPSTREAM_OPERATIONS: unknown operation "nope"'])
})

test('the login is the profile\'s: its paths under UPSTREAM_BASE_URL, its fields, its scheme; the settings are shorthand, and both at once refuse the start', async (t) => {
  const file = fileURLToPath(new URL(SHIPPED[1]!, ROOT))
  const hub = { UPSTREAM_HUB_URL: 'https://hub.example.go.id', UPSTREAM_BASE_URL: 'https://nle.example.go.id/api/', UPSTREAM_API_KEY: 'k', PLATFORM_ID: 'p', UPSTREAM_ACCESS_TOKEN: 't' }
  const login = { ...hub, UPSTREAM_CREDENTIALS: 'login', UPSTREAM_LOGIN_USERNAME: 'u', UPSTREAM_LOGIN_PASSWORD: 'p' }
  const callers = resolved({ ...login, UPSTREAM_PROFILE_FILE: file })
  t.strictSame(callers.loginAddresses, {
    url: 'https://nle.example.go.id/api/nle-oauth/v1/user/login',
    refreshUrl: 'https://nle.example.go.id/api/nle-oauth/v1/user/update-token'
  }, 'the paths under the base address, its own path kept')
  t.strictSame([callers.login.tokenField, callers.login.expiresField, callers.login.refreshTokenField, callers.tokenScheme],
    ['item.access_token', 'item.expires_in', 'item.refresh_token', 'Bearer'], 'where the envelope keeps the token, its lifetime and the refresh token')

  const settings = resolved({
    ...login,
    UPSTREAM_LOGIN_URL: 'https://auth.example.go.id/login',
    UPSTREAM_LOGIN_REFRESH_URL: 'https://auth.example.go.id/refresh',
    UPSTREAM_LOGIN_TOKEN_FIELD: 'item.access_token',
    UPSTREAM_LOGIN_EXPIRES_FIELD: 'item.expires_in',
    UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD: 'item.refresh_token',
    UPSTREAM_LOGIN_TOKEN_SCHEME: 'none'
  })
  t.strictSame(settings.loginAddresses, { url: 'https://auth.example.go.id/login', refreshUrl: 'https://auth.example.go.id/refresh' }, 'without a profile: the settings')
  t.strictSame([settings.login.refreshTokenField, settings.tokenScheme], ['item.refresh_token', ''], 'none: the token alone')
  t.strictSame(resolved({ ...hub }).loginAddresses, { url: undefined, refreshUrl: undefined }, 'static mode: no login')

  const keep = 'keep one of them (unset the setting, or remove that member of the profile)'
  t.same(resolveProblems({
    ...login,
    UPSTREAM_PROFILE_FILE: file,
    UPSTREAM_LOGIN_URL: 'https://auth.example.go.id/login',
    UPSTREAM_LOGIN_REFRESH_URL: 'https://auth.example.go.id/refresh',
    UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD: 'data.refresh'
  }), [
    `UPSTREAM_LOGIN_REFRESH_TOKEN_FIELD: the profile (${file}) says the same at $.login.refreshTokenField; ${keep}`,
    `UPSTREAM_LOGIN_URL: the profile (${file}) says the same at $.login.path; ${keep}`,
    `UPSTREAM_LOGIN_REFRESH_URL: the profile (${file}) says the same at $.login.refreshPath; ${keep}`
  ])
  t.same(resolveProblems({ ...hub, UPSTREAM_PROFILE_FILE: file, UPSTREAM_LOGIN_URL: 'https://auth.example.go.id/login' }), [], 'outside login mode the addresses are not read')

  const noPath = writeTempFile(t, JSON.stringify({ name: 'x', login: { tokenField: 'token' } }))
  t.same(resolveProblems({ ...login, UPSTREAM_PROFILE_FILE: noPath }), [`UPSTREAM_LOGIN_URL: is required when UPSTREAM_CREDENTIALS=login, unless the profile gives login.path (${noPath} gives none)`])
  const refreshOnly = resolved({ ...login, UPSTREAM_PROFILE_FILE: noPath, UPSTREAM_LOGIN_URL: 'https://auth.example.go.id/login' })
  t.strictSame(refreshOnly.loginAddresses, { url: 'https://auth.example.go.id/login', refreshUrl: undefined }, 'a profile without paths: the setting\'s address')
})

test('the server stops with one config error line per problem of the profile, naming its place in the file', async (t) => {
  const file = writeTempFile(t, JSON.stringify({ name: 'hub', defaults: { dateSent: 'DDMMYYYY' }, operations: { kontainerbc20: { path: 'kontainerbc20/{noBl}' } } }))
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', UPSTREAM_PROFILE_FILE: file },
    cwd: fileURLToPath(ROOT),
    stdio: ['ignore', 'ignore', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.same(stderr.trim().split('\n').filter(l => l.startsWith('config error:')), [
    `config error: UPSTREAM_PROFILE_FILE (${file}) $.defaults.dateSent: must be one of "YYYYMMDD", "YYYY-MM-DD"`
  ], 'the schema first; the rules once it holds')
})

test('an app with a profile it refuses does not start', async (t) => {
  const file = writeTempFile(t, JSON.stringify({ name: 'hub', operations: { kontainerbc20: { path: 'kontainerbc20/{noBl}' } } }))
  await t.rejects(build(t, { env: { UPSTREAM_PROFILE_FILE: file } }), new ConfigError([`UPSTREAM_PROFILE_FILE (${file}) $.operations.kontainerbc20.path: {noBl} names no parameter of this operation (its hub names: tglBl; set \`params\` to take another)`]))
})

test('the words of the other rules: empty, too long, too many, twice', async (t) => {
  t.same(profileProblems({
    name: 'x',
    description: 'd'.repeat(2001),
    defaults: { apiKeyHeader: [], answerKey: '', nullStrings: ['null', 'null'], errorFields: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] },
    operations: { DetilBooking: { apiKeyHeader: ['a', 'b', 'c', 'd', 'e'] } }
  }), [
    '$.description: is longer than the 2000 characters allowed',
    '$.defaults.apiKeyHeader: must be one of the forms allowed: The name of the header that carries the API key, or several names: the key is sent under each',
    '$.defaults.answerKey: must not be empty: Where the data is in the answer: the member holding the list (or the record), or `*` for the answer itself when it is an array, else its only array-valued member. In `defaults`, only for the operations that answer a list',
    '$.defaults.errorFields: holds more than the 8 items allowed',
    '$.defaults.nullStrings: holds the same item twice',
    '$.operations.DetilBooking.apiKeyHeader: must be one of the forms allowed: The name of the header that carries the API key, or several names: the key is sent under each'
  ])
  t.same(profileProblems({ name: 'x', defaults: { errorFields: [] } }), ['$.defaults.errorFields: must hold at least 1 item'])
})
