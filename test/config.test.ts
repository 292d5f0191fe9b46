import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { EXPECTED } from '../src/config/expected.ts'
import { ConfigError, isSandboxMode, loadConfig, sentinelAddresses } from '../src/config/load.ts'
import { resolveConfig } from '../src/config/resolve.ts'
import { configProblems as problemsOf, writeTempFile } from './helper.ts'

test('defaults: the contract\'s values, sandbox mode', async (t) => {
  const config = loadConfig({})
  t.equal(config.PORT, 3000)
  t.equal(config.HOST, undefined, 'HOST unset: config/listen.ts decides')
  t.equal(config.UPSTREAM_CREDENTIALS, 'static')
  t.equal(config.UPSTREAM_PROFILE_FILE, undefined, 'the hub: the built-in profile')
  t.equal(config.LOG_LEVEL, 'info')
  t.ok(isSandboxMode(config))
})

test('each problem is one line naming the variable', async (t) => {
  const problems = problemsOf({
    PORT: 'abc',
    UPSTREAM_CREDENTIALS: 'both',
    TRANSCODE_THREADS: '99',
    LOG_LEVEL: 'loud',
    UPSTREAM_ENV: 'prod'
  })
  t.equal(problems.length, 5, problems.join('\n'))
  const named = ['PORT', 'UPSTREAM_CREDENTIALS', 'TRANSCODE_THREADS', 'LOG_LEVEL', 'UPSTREAM_ENV']
  for (const name of named) {
    t.ok(problems.some(p => p.startsWith(`${name}:`)), `${name} named`)
  }
  t.ok(problems.every(p => !p.includes('\n')))
  t.ok(problems.find(p => p.startsWith('UPSTREAM_CREDENTIALS'))?.includes('static, login, forward'),
    'allowed values listed')
})

test('whole-number settings are refused unless written in decimal digits, never truncated', async (t) => {
  const { ConfigSchema } = await import('../src/config/schema.ts')
  const integers = Object.entries(ConfigSchema.properties).filter(([, schema]) => (schema as { type?: string }).type === 'integer').map(([name]) => name)
  t.ok(integers.length >= 20, `${integers.length} whole-number settings`)
  for (const name of integers) {
    t.same(problemsOf({ [name]: '1.5' }), [`${name}: must be a whole number in decimal digits (such as 64)`], `${name}=1.5`)
  }
  for (const written of ['1e3', '0x10', '+5', '2.0', 'Infinity', '12abc']) {
    t.same(problemsOf({ SERVER_MAX_CONNECTIONS: written }),
      ['SERVER_MAX_CONNECTIONS: must be a whole number in decimal digits (such as 64)'], written)
  }
  t.equal(loadConfig({ SERVER_MAX_CONNECTIONS: ' 12 ' }).SERVER_MAX_CONNECTIONS, 12,
    'spaces around are trimmed')
  t.equal(loadConfig({ CACHE_MAX_BYTES: '0' }).CACHE_MAX_BYTES, 0)
  t.match(problemsOf({ SERVER_MAX_CONNECTIONS: '0' }), [/^SERVER_MAX_CONNECTIONS: must be >= 1/],
    'the range is still checked')
  // In a hub profile too (its JSON is not converted): 1.5 is not an integer, and is not made one.
  const { profileProblems } = await import('../src/profile/load.ts')
  t.same(profileProblems({ name: 'x', operations: { noblbc20: { cacheTtlSeconds: 1.5 } } }),
    ['$.operations.noblbc20.cacheTtlSeconds: must be a whole number: How long its answers are ' +
      'cached, in seconds (0: not cached); default CACHE_TTL_SECONDS'])
})

test('an upstream needs both addresses and its credentials', async (t) => {
  t.match(problemsOf({ UPSTREAM_HUB_URL: 'https://hub.example' }), [/^UPSTREAM_BASE_URL: must be set together with UPSTREAM_HUB_URL/])
  t.same(problemsOf({ UPSTREAM_HUB_URL: 'https://hub.example', UPSTREAM_BASE_URL: 'https://base.example' }).map(p => p.split(':')[0]),
    ['UPSTREAM_API_KEY', 'PLATFORM_ID', 'UPSTREAM_ACCESS_TOKEN'])
  t.match(problemsOf({ UPSTREAM_HUB_URL: 'ftp://hub', UPSTREAM_BASE_URL: 'https://b' }), [/^UPSTREAM_HUB_URL/])
})

test('resolveConfig: the sandbox\'s settings under the environment\'s, narrowed to what the gateway runs with', async (t) => {
  const sandbox = {
    UPSTREAM_HUB_URL: 'http://127.0.0.1:4010',
    UPSTREAM_BASE_URL: 'http://127.0.0.1:4010',
    UPSTREAM_API_KEY: 'sandbox-key',
    UPSTREAM_ACCESS_TOKEN: 'sandbox-token',
    PLATFORM_ID: 'SBX',
    UPSTREAM_LOGIN_USERNAME: 'u',
    UPSTREAM_LOGIN_PASSWORD: 'p'
  }
  const config = resolveConfig({ PLATFORM_ID: 'MINE', UPSTREAM_API_KEY: ' ', SANDBOX: 'true' }, { sandbox })
  t.equal(config.UPSTREAM_HUB_URL, sandbox.UPSTREAM_HUB_URL, 'the sandbox\'s address')
  t.equal(config.PLATFORM_ID, 'MINE', 'a setting of the environment wins')
  t.equal(config.UPSTREAM_API_KEY, 'sandbox-key', 'an empty one does not')
  t.equal(config.SANDBOX, undefined, 'SANDBOX, read already, is not held against the sandbox\'s own addresses')
  t.equal(config.UPSTREAM_ACCESS_TOKEN, 'sandbox-token')
  const fromFile = resolveConfig({ UPSTREAM_ACCESS_TOKEN_FILE: writeTempFile(t, 'a-token\n') }, { sandbox })
  t.equal(fromFile.UPSTREAM_ACCESS_TOKEN, undefined, 'a token file replaces the sandbox\'s token instead of conflicting with it')
  const login = resolveConfig({ UPSTREAM_CREDENTIALS: 'login' }, { sandbox })
  t.equal(login.UPSTREAM_CREDENTIALS === 'login' ? login.UPSTREAM_LOGIN_USERNAME : undefined, 'u',
    'login mode has its account')
  const passwordFile = {
    UPSTREAM_CREDENTIALS: 'login',
    UPSTREAM_LOGIN_PASSWORD_FILE: writeTempFile(t, 'mine\n')
  }
  t.throws(() => resolveConfig(passwordFile, { sandbox }),
    new ConfigError(['UPSTREAM_LOGIN_USERNAME: is required with UPSTREAM_LOGIN_PASSWORD']),
    'a password file replaces the sandbox\'s password, not its user name')
  const configured = resolveConfig({ ...sandbox, UPSTREAM_HUB_URL: 'https://hub.example.co.id' }, { sandbox: { UPSTREAM_HUB_URL: 'http://ignored' } })
  t.equal(configured.UPSTREAM_HUB_URL, 'https://hub.example.co.id', 'a configured hub: the sandbox\'s settings are not used')
  t.throws(() => resolveConfig({}), new ConfigError(['UPSTREAM_HUB_URL: is required (no hub is configured and no built-in sandbox was started)', 'UPSTREAM_BASE_URL: is required (no hub is configured and no built-in sandbox was started)', 'UPSTREAM_API_KEY: is required (no hub is configured and no built-in sandbox was started)', 'PLATFORM_ID: is required (no hub is configured and no built-in sandbox was started)']), 'no hub and no sandbox: refused, not half a configuration')
  t.throws(() => resolveConfig({ SANDBOX: 'maybe' }, { sandbox }), ConfigError, 'the environment is checked before the sandbox\'s settings are used')
})

test('an operation\'s profile entry is checked against the catalogue, and read', async (t) => {
  const { resolveOperations } = await import('../src/upstream/resolve-operations.ts')
  const { profileProblems } = await import('../src/profile/load.ts')
  const { resolveProfile } = await import('../src/profile/resolve.ts')
  t.match(profileProblems({ name: 'x', operations: { nope: {} } }),
    [/^\$\.operations: unknown member "nope"/])
  t.match(profileProblems({ name: 'x', operations: { noblbc20: { params: { x: 'y' } } } }),
    [/^\$\.operations\.noblbc20\.params: unknown member "x"/])
  const kontainerbc20 = { answerKey: 'Data Kontainer BC20', credentials: ['token'] }
  const file = writeTempFile(t, JSON.stringify({ name: 'x', operations: { kontainerbc20 } }))
  const config = loadConfig({ UPSTREAM_PROFILE_FILE: file })
  const ops = resolveOperations(config, resolveProfile(config))
  t.same(ops.get('kontainerbc20')?.answer, { kind: 'key', key: 'Data Kontainer BC20' })
  t.same([ops.get('kontainerbc20')?.sendsApiKey, ops.get('kontainerbc20')?.sendsToken], [false, true])
})

function startServer (env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    // A loaded test machine would make the gateway (rightly) shed load; not the subject here.
    env: { PATH: process.env.PATH ?? '', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  return child
}

test('invalid configuration stops start-up with one line per problem', async (t) => {
  const child = startServer({ PORT: 'abc', UPSTREAM_HUB_URL: 'https://hub.example' })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  const lines = stderr.trim().split('\n').filter(l => l.startsWith('config error:'))
  t.equal(lines.length, 1, stderr)
  t.match(lines[0], /PORT/)
})

test('the start line says what runs and where the state is, never a password', async (t) => {
  const { startLine } = await import('../src/config/start-line.ts')
  const hub = {
    UPSTREAM_HUB_URL: 'https://hub.example.go.id/api',
    UPSTREAM_BASE_URL: 'https://hub.example.go.id'
  }
  const REDIS_URL = 'rediss://gateway:s3cret@redis.internal:6380'
  const redis = startLine({ ...hub, REDIS_URL }, false, '1.0.0')
  const state = 'redis at redis.internal:6380'
  t.same(redis, {
    fields: { version: '1.0.0', mode: 'hub', hub: 'hub.example.go.id', state },
    message: `customs-gateway 1.0.0 in front of the hub at hub.example.go.id, state in ${state}`
  })
  t.notMatch(JSON.stringify(redis), 's3cret')
  const sentinels = {
    REDIS_URL: 'redis://gateway:pw@mymaster',
    REDIS_SENTINELS: 's-1:26379, s-2:26379'
  }
  t.equal(startLine({ ...hub, ...sentinels }, false, '1.0.0').fields.state,
    'redis via sentinels s-1:26379,s-2:26379')
})

test('with no upstream the server starts its sandbox, says so first, and closes on SIGTERM', async (t) => {
  const child = startServer({ PORT: '0', HOST: '127.0.0.1' })
  t.teardown(() => { child.kill('SIGKILL') })
  const lines = createInterface({ input: child.stdout })
  const seen: Array<Record<string, unknown>> = []
  for await (const line of lines) {
    seen.push(JSON.parse(line) as Record<string, unknown>)
    if (String(seen.at(-1)?.msg).startsWith('Server listening')) break
  }
  t.match(seen[0]?.msg, /built-in sandbox/, 'the first log line says the sandbox is in use')
  const profile = /^hub profile in force: sandbox \(built-in\), digest [0-9a-f]{16}$/
  const runs = { mode: 'sandbox', state: 'memory', version: /^\d+\.\d+\.\d+/ }
  t.match(seen, [{}, runs, { msg: profile }], 'then what runs, in short')
  t.same(seen.filter(line => JSON.stringify(line).length > 400), [],
    'every line short: no profile dump')
  const address = /listening at (http:\/\/[^ ]+)/.exec(String(seen.at(-1)?.msg))?.[1]
  const res = await fetch(`${address}/v1/customs/bc20/bills-of-lading?npwp=012345678901000`)
  t.equal(res.status, 200)
  t.ok(((await res.json()) as { data: unknown[] }).data.length > 0, 'the sandbox answers with data')
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0)
})

test('.env.example lists every setting a deployment sets, with its default', async (t) => {
  const { readFile } = await import('node:fs/promises')
  const { DEPLOYMENT } = await import('../scripts/docs/configuration-reference.ts')
  const text = await readFile(new URL('../.env.example', import.meta.url), 'utf8')
  const defaults = loadConfig({}) as Record<string, unknown>
  for (const name of DEPLOYMENT) {
    const line = text.split('\n').find(l => l.replace(/^# /, '').startsWith(`${name}=`))
    t.ok(line, `${name} is listed`)
    const value = line?.split('=').slice(1).join('=')
    if (defaults[name] !== undefined && !line?.startsWith('#')) {
      t.equal(value, typeof defaults[name] === 'object' ? JSON.stringify(defaults[name]) : String(defaults[name]), `${name} shows its default`)
    }
  }
  // The example file, loaded as it is, is a valid configuration.
  const env = Object.fromEntries(text.split('\n').filter(l => /^[A-Z_]+=/.test(l)).map(l => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
  t.doesNotThrow(() => loadConfig(env))
})

test('the Redis settings: redis:// or rediss:// with credentials, a safe key prefix, a bounded command timeout', async (t) => {
  const config = loadConfig({})
  t.equal(config.REDIS_URL, undefined, 'unset by default: state in memory')
  t.equal(config.REDIS_KEY_PREFIX, 'cgw:')
  t.equal(config.REDIS_COMMAND_TIMEOUT_MS, 500)
  for (const good of ['redis://localhost', 'REDIS://redis:6379', 'rediss://gateway:s%40cret@redis.internal:6380/2', 'redis://:pw@[::1]:6379', 'redis://gateway:pw@10.0.0.5']) {
    t.same(problemsOf({ REDIS_URL: good }), [], good)
  }
  const password = 'hunter2-hunter2'
  for (const bad of [`http://gateway:${password}@redis`, `redis://gateway:${password}@`, `redis://gateway:${password}@redis/cache`, `redis://gateway:${password}@redis:6379/0?tls=1`, `redis://gateway:p@${password}@redis`]) {
    const problems = problemsOf({ REDIS_URL: bad })
    t.same(problems, [`REDIS_URL: must be ${EXPECTED.REDIS_URL}`], `refused: ${bad.replace(password, '…')}`)
    t.notMatch(problems.join('\n'), password, 'the error line does not repeat the password')
  }
  for (const bad of ['cgw*', 'a b', 'x'.repeat(65)]) t.same(problemsOf({ REDIS_KEY_PREFIX: bad }), [`REDIS_KEY_PREFIX: must be ${EXPECTED.REDIS_KEY_PREFIX}`], JSON.stringify(bad))
  t.same(problemsOf({ REDIS_COMMAND_TIMEOUT_MS: '9' }), ['REDIS_COMMAND_TIMEOUT_MS: must be >= 10'])
  t.same(problemsOf({ REDIS_COMMAND_TIMEOUT_MS: '10001' }), ['REDIS_COMMAND_TIMEOUT_MS: must be <= 10000'])
})

test('a setting checked by a pattern says what it expects, with an example, never the regular expression', async (t) => {
  const { ConfigSchema } = await import('../src/config/schema.ts')
  const patterned = Object.entries(ConfigSchema.properties).filter(([, schema]) => 'pattern' in schema || 'format' in schema).map(([name]) => name).sort()
  t.same(Object.keys(EXPECTED).sort(), patterned, 'every pattern-checked setting has its sentence in src/config/expected.ts, and no other')
  const bad: Record<string, string> = {
    UPSTREAM_HUB_URL: 'ftp://hub.example',
    UPSTREAM_BASE_URL: 'hub.example',
    TRANSCODE_THREADS: '32',
    RATE_LIMIT_WINDOW: 'soon',
    CORS_ORIGINS: 'yard.example.co.id',
    REDIS_URL: 'redis.internal:6379',
    REDIS_KEY_PREFIX: 'cgw*',
    REDIS_SENTINELS: 'sentinel-1',
    REDIS_SENTINEL_MASTER_NAME: 'my master',
    REDIS_SENTINEL_USERNAME: 'gate way'
  }
  for (const name of patterned) {
    const problems = problemsOf({ [name]: bad[name] ?? '' })
    const line = problems.find(p => p.startsWith(`${name}:`))
    t.equal(line, `${name}: must be ${EXPECTED[name]}`, `${name}=${bad[name]}`)
    t.match(line, /such as /, `${name}: with an example`)
    const { pattern } = ConfigSchema.properties[name as keyof typeof ConfigSchema.properties] as { pattern?: string }
    t.ok(pattern === undefined || !line?.includes(pattern), `${name}: not the pattern`)
    t.notMatch(line, /\[A-Za-z|\\d|\]\+|\)\*|\(\?|must match/, `${name}: nothing of a regular expression`)
  }
  t.same(problemsOf({ RATE_LIMIT_WINDOW: '30 s', CORS_ORIGINS: 'https://a.example, http://localhost:5173', REDIS_URL: 'rediss://gateway:s%40cret@redis.internal:6380' }), [], 'the examples\' kind of value passes')
})

test('the Redis failover settings: Sentinels as host:port, with REDIS_URL for the master\'s credentials; the replica wait below the command timeout', async (t) => {
  const config = loadConfig({})
  t.equal(config.REDIS_SENTINELS, undefined)
  t.equal(config.REDIS_SENTINEL_MASTER_NAME, 'mymaster')
  t.equal(config.REDIS_REPLICA_ACK_TIMEOUT_MS, 100)
  const url = 'redis://gateway:pw@mymaster'
  for (const good of ['sentinel-1:26379', '10.0.0.1:26379, 10.0.0.2:26379,10.0.0.3:26379', '[::1]:26379']) {
    t.same(problemsOf({ REDIS_URL: url, REDIS_SENTINELS: good }), [], good)
  }
  t.same(sentinelAddresses(' a:1, [::1]:2 ,b.example:26379'), [{ host: 'a', port: 1 }, { host: '::1', port: 2 }, { host: 'b.example', port: 26379 }])
  for (const bad of ['sentinel-1', 'a:1;b:2', 'http://a:1', 'a:1,']) t.same(problemsOf({ REDIS_URL: url, REDIS_SENTINELS: bad }), [`REDIS_SENTINELS: must be ${EXPECTED.REDIS_SENTINELS}`], bad)
  t.same(problemsOf({ REDIS_SENTINELS: 'a:1' }), ['REDIS_URL: is required with REDIS_SENTINELS (for the master\'s user, password, database and scheme; its host is not used), e.g. redis://gateway:PASSWORD@mymaster'])
  t.same(problemsOf({ REDIS_URL: url, REDIS_SENTINEL_PASSWORD_FILE: writeTempFile(t, 'pw\n'), REDIS_SENTINEL_USERNAME: 'gw' }),
    ['REDIS_SENTINEL_USERNAME: is used only with REDIS_SENTINELS', 'REDIS_SENTINEL_PASSWORD (from REDIS_SENTINEL_PASSWORD_FILE): is used only with REDIS_SENTINELS'])
  t.same(problemsOf({ REDIS_REPLICA_ACK_TIMEOUT_MS: '500' }), ['REDIS_REPLICA_ACK_TIMEOUT_MS: must be below REDIS_COMMAND_TIMEOUT_MS (500), which bounds the wait too'])
  t.same(problemsOf({ REDIS_REPLICA_ACK_TIMEOUT_MS: '0' }), [], '0: never wait')
  t.same(problemsOf({ REDIS_SENTINEL_MASTER_NAME: 'my master' }), [`REDIS_SENTINEL_MASTER_NAME: must be ${EXPECTED.REDIS_SENTINEL_MASTER_NAME}`])
})
