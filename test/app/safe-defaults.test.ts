import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { listenHost, LOOPBACK_ADVICE } from '../../src/config/listen.ts'
import { loadConfig } from '../../src/config/load.ts'
import { SETTING_PREFIXES, unknownSettings } from '../../src/config/unknown-settings.ts'
import { ConfigSchema } from '../../src/config/schema.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build, configProblems as problemsOf } from '../helpers/helper.ts'

/**
 * Safe defaults at start-up (docs/deployment.md#settings): SANDBOX,
 * unknown settings, TRUST_PROXY.
 */

const HUB = {
  UPSTREAM_HUB_URL: 'http://h',
  UPSTREAM_BASE_URL: 'http://b',
  UPSTREAM_API_KEY: 'k',
  UPSTREAM_ACCESS_TOKEN: 't',
  PLATFORM_ID: 'p'
}

test('in production without a hub the configuration is refused, unless the sandbox is asked ' +
  'for', async (t) => {
  t.same(problemsOf({ NODE_ENV: 'production' }), [
    'UPSTREAM_HUB_URL: is required with NODE_ENV=production (set UPSTREAM_HUB_URL and ' +
    "UPSTREAM_BASE_URL, or SANDBOX=true to serve the built-in sandbox's seeded data)"
  ])
  t.same(
    problemsOf({ NODE_ENV: 'production', SANDBOX: 'true' }),
    [],
    'SANDBOX=true: the sandbox, knowingly'
  )
  t.same(problemsOf({ NODE_ENV: 'production', ...HUB }), [], 'a hub configured: fine')
  t.same(problemsOf({}), [], 'outside production: the sandbox, as before')
  t.same(problemsOf({ NODE_ENV: 'development' }), [])
  t.match(
    problemsOf({ SANDBOX: 'false' }),
    [/^UPSTREAM_HUB_URL: is required with SANDBOX=false/],
    'SANDBOX=false never falls back to the sandbox'
  )
  t.match(
    problemsOf({ SANDBOX: 'true', ...HUB }),
    [/^SANDBOX: true fronts the built-in sandbox/],
    'a sandbox and a hub at once is a contradiction'
  )
  for (const written of ['yes', '1', 'TRUE', 'on']) {
    t.same(
      problemsOf({ SANDBOX: written }),
      ['SANDBOX: must be true or false'],
      `SANDBOX=${written}`
    )
  }
})

function startServer (env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
}

async function linesUntilDocs (
  child: ReturnType<typeof startServer>
): Promise<Array<Record<string, unknown>>> {
  const seen: Array<Record<string, unknown>> = []
  for await (const line of createInterface({ input: child.stdout })) {
    seen.push(JSON.parse(line) as Record<string, unknown>)
    if (String(seen.at(-1)?.msg).startsWith('API documentation')) break
  }
  return seen
}

test('the server refuses to start in production without a hub, with a config error ' +
  'line', async (t) => {
  const child = startServer({ NODE_ENV: 'production' })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  const [code] = await once(child, 'exit')
  t.equal(code, 1)
  t.same(
    stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('config error:')),
    [
      'config error: UPSTREAM_HUB_URL: is required with NODE_ENV=production (set ' +
      "UPSTREAM_HUB_URL and UPSTREAM_BASE_URL, or SANDBOX=true to serve the built-in sandbox's " +
      'seeded data)'
    ]
  )
  t.notMatch(stdout, /sandbox/, 'no sandbox was started')
})

test('with SANDBOX=true in production it starts the sandbox; unknown settings get one warning ' +
  'each; the docs URL is given', async (t) => {
  const child = startServer({
    NODE_ENV: 'production',
    SANDBOX: 'true',
    CACHE_TTL: '5',
    cors_origin: 'http://localhost:5173',
    EVENTS_COLOR: 'red',
    NODE_OPTIONS: '',
    SANDBOX_PORT: '4010'
  })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  const seen = await linesUntilDocs(child)
  t.match(seen[0], { msg: /built-in sandbox/ }, 'the first line: the sandbox')
  const unknown = seen.filter((l) => typeof l.variable === 'string')
  t.same(
    unknown.map((l) => l.variable),
    ['CACHE_TTL', 'EVENTS_COLOR', 'cors_origin'],
    'one line per unknown setting; NODE_OPTIONS and SANDBOX_PORT are not ours'
  )
  t.match(
    unknown.find((l) => l.variable === 'CACHE_TTL'),
    {
      level: 40,
      meant: 'CACHE_TTL_SECONDS',
      msg: 'unknown setting CACHE_TTL is ignored: did you mean CACHE_TTL_SECONDS?'
    }
  )
  t.match(
    unknown.find((l) => l.variable === 'cors_origin'),
    { meant: 'CORS_ORIGINS' }
  )
  t.match(
    unknown.find((l) => l.variable === 'EVENTS_COLOR'),
    { msg: 'unknown setting EVENTS_COLOR is ignored' }
  )
  const docs = seen.at(-1)
  t.match(
    docs,
    { level: 30, docs: /^http:\/\/127\.0\.0\.1:\d+\/docs$/ },
    'the docs URL, among the first lines'
  )
  t.ok(seen.length <= 8, `within the first lines (${seen.length})`)
  const res = await fetch(
    String(docs?.docs).replace(
      /\/docs$/,
      `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
    )
  )
  t.equal(res.status, 200, `the sandbox answers: ${(await res.clone().text()).slice(0, 300)}`)
})

test('the prefixes and known names come from ConfigSchema', async (t) => {
  for (const prefix of ['UPSTREAM_', 'CACHE_', 'RATE_', 'IDEMPOTENCY_', 'TRUST_']) {
    t.ok(SETTING_PREFIXES.includes(prefix), prefix)
  }
  t.notOk(SETTING_PREFIXES.includes('NODE_'), 'the platform\'s NODE_* are not ours')
  t.same(
    unknownSettings(
      Object.fromEntries(Object.keys(ConfigSchema.properties).map((name) => [name, 'x']))
    ),
    [],
    'no known name is flagged'
  )
  t.same(unknownSettings({ EVENTS_COLOR: '1', PATH: '/bin', HOME: '/root' }),
    [{ name: 'EVENTS_COLOR' }],
    'an unknown name without a near setting')
})

test('did you mean: the one setting within a few edits, over names without case and underscores, ' +
  'the unit optional', async (t) => {
  const meant = (name: string) => unknownSettings({ [name]: 'x' })[0]?.meant
  const cases: Array<[string, string]> = [
    ['UPSTREAM_HUBURL', 'UPSTREAM_HUB_URL'],
    ['upstream_hub_url', 'UPSTREAM_HUB_URL'],
    ['REDIS_UR', 'REDIS_URL'],
    ['REDIS_URI', 'REDIS_URL'],
    ['CORS_ORIGIN', 'CORS_ORIGINS'],
    ['CACHE_TTL', 'CACHE_TTL_SECONDS'],
    ['SHUTDOWN_GRACE', 'SHUTDOWN_GRACE_MS'],
    ['UPSTREAM_HUB_ULR', 'UPSTREAM_HUB_URL'],
    ['LOG_LEVL', 'LOG_LEVEL'],
    // Without a gateway prefix, when long enough and close.
    ['CLIENT_FILE', 'CLIENTS_FILE'],
    ['METRIC_PORT', 'METRICS_PORT']
  ]
  for (const [name, setting] of cases) t.equal(meant(name), setting, `${name}: ${setting}`)
  t.same(
    unknownSettings({ REDIS_HOST: 'x' }),
    [{ name: 'REDIS_HOST' }],
    'a gateway prefix, nothing near: flagged without a guess'
  )
  t.same(
    unknownSettings({ UPSTREAM_ACCESS_TOKEN_FI: 'x' }),
    [{ name: 'UPSTREAM_ACCESS_TOKEN_FI' }],
    'as near UPSTREAM_ACCESS_TOKEN as UPSTREAM_ACCESS_TOKEN_FILE: no guess'
  )
  t.same(
    unknownSettings({
      HOSTS: 'x',
      PORTS: 'x',
      HOSTNAME: 'h',
      PATH: '/bin',
      NODE_OPTIONS: '',
      SANDBOX_PORT: '1',
      KUBERNETES_PORT: 'tcp://10.0.0.1:443'
    }),
    [],
    "short or distant names without a gateway prefix are someone else's"
  )
})

test('in production a variable close to REDIS_URL, REDIS_KEY_PREFIX, REDIS_SENTINELS, ' +
  'CLIENTS_FILE or a hub setting stops start-up', async (t) => {
  const production = { NODE_ENV: 'production', SANDBOX: 'true' }
  const refusal = (name: string, setting: string) =>
    `${name}: is no setting; did you mean ${setting}? With NODE_ENV=production a misspelt ` +
    'setting of the shared state (REDIS_URL, REDIS_KEY_PREFIX, REDIS_SENTINELS), of the callers ' +
    '(CLIENTS_FILE) or of the hub (UPSTREAM_*) stops start-up rather than run without it: rename ' +
    `or remove ${name}`
  t.same(problemsOf({ ...production, REDIS_UR: 'redis://redis:6379' }), [
    refusal('REDIS_UR', 'REDIS_URL')
  ])
  t.same(
    problemsOf({ ...production, redis_url: 'redis://redis:6379' }),
    [refusal('redis_url', 'REDIS_URL')],
    'in any case'
  )
  t.same(problemsOf({ ...production, REDIS_KEY_PREFX: 'prod:' }), [
    refusal('REDIS_KEY_PREFX', 'REDIS_KEY_PREFIX')
  ])
  t.same(problemsOf({ ...production, CLIENT_FILE: '/run/secrets/clients.json' }), [
    refusal('CLIENT_FILE', 'CLIENTS_FILE')
  ])
  t.same(problemsOf({ ...production, REDIS_SENTINEL: 'sentinel-1:26379' }), [
    refusal('REDIS_SENTINEL', 'REDIS_SENTINELS')
  ])
  t.same(problemsOf({ ...HUB, NODE_ENV: 'production', UPSTREAM_DEADLIN_MS: '9000' }), [
    refusal('UPSTREAM_DEADLIN_MS', 'UPSTREAM_DEADLINE_MS')
  ])
  t.same(
    problemsOf({ ...production, CACHE_TTL: '5', CORS_ORIGIN: 'http://x', REDIS_HOST: 'redis' }),
    [],
    'other typos are warnings only'
  )
  t.same(problemsOf({ REDIS_UR: 'redis://redis:6379' }), [], 'outside production a warning only')

  const child = startServer({ ...production, REDIS_UR: 'redis://redis:6379' })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  const [code] = await once(child, 'exit')
  t.equal(code, 1, 'the process exits')
  t.same(
    stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('config error:')),
    [`config error: ${refusal('REDIS_UR', 'REDIS_URL')}`]
  )
  t.notMatch(stdout, /sandbox/, 'before anything started')
})

test('TRUST_PROXY: unset, a hop count, or addresses and CIDRs; anything else is ' +
  'refused', async (t) => {
  for (const good of [
    '1',
    '2',
    '10.0.0.1',
    '10.0.0.0/8, 192.168.1.1',
    'loopback',
    '::1',
    'fd00::/8'
  ]) { t.same(problemsOf({ TRUST_PROXY: good }), [], good) }
  for (const bad of ['true', '*', '0', '10.0.0.0/33', 'proxy.internal', '1.2.3']) {
    t.match(
      problemsOf({ TRUST_PROXY: bad }),
      [/^TRUST_PROXY: must be a hop count \(1-99\) or comma-separated addresses or CIDRs/],
      bad
    )
  }
})

const PROXY = '10.0.0.5'

test('per-address limits and logged addresses follow TRUST_PROXY', async (t) => {
  const url = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  // Callers without a key are limited by address: one request each per window here.
  const ask = (app: Awaited<ReturnType<typeof build>>['app'], forwardedFor: string) =>
    app.inject({ url, remoteAddress: PROXY, headers: { 'x-forwarded-for': forwardedFor } })

  for (const trust of [undefined, '192.168.9.9']) {
    const { app, logs } = await build(t, {
      env: { RATE_LIMIT_MAX: '1', ...(trust === undefined ? {} : { TRUST_PROXY: trust }) }
    })
    t.equal((await ask(app, '203.0.113.7')).statusCode, 200)
    t.equal(
      (await ask(app, '198.51.100.8')).statusCode,
      429,
      `TRUST_PROXY ${trust ?? 'unset'}: every caller behind the proxy shares its address`
    )
    t.ok(
      logs.some((l) => (l.req as { remoteAddress?: string } | undefined)?.remoteAddress === PROXY),
      "the proxy's address is logged"
    )
  }
  for (const trust of ['1', '10.0.0.0/8', PROXY]) {
    const { app, logs } = await build(t, { env: { RATE_LIMIT_MAX: '1', TRUST_PROXY: trust } })
    t.equal((await ask(app, '203.0.113.7')).statusCode, 200)
    t.equal(
      (await ask(app, '198.51.100.8')).statusCode,
      200,
      `TRUST_PROXY ${trust}: another caller behind the proxy has its own limit`
    )
    t.equal(
      (await ask(app, '203.0.113.7')).statusCode,
      429,
      'and the first is limited by its own address'
    )
    const logged = logs
      .map((l) => (l.req as { remoteAddress?: string } | undefined)?.remoteAddress)
      .filter(Boolean)
    t.ok(
      logged.includes('203.0.113.7') && logged.includes('198.51.100.8'),
      `the callers' addresses are logged (${[...new Set(logged)].join(', ')})`
    )
    t.notOk(logged.includes(PROXY), 'not the proxy\'s')
  }
})

test('HOST unset: every interface when callers authenticate, loopback while authentication is ' +
  'off', async (t) => {
  t.same(
    listenHost(loadConfig({})),
    { host: '127.0.0.1', loopbackByDefault: true },
    'no CLIENTS_FILE: loopback'
  )
  t.same(
    listenHost(loadConfig({ CLIENTS_FILE: '/run/secrets/clients.json' })),
    { host: '0.0.0.0', loopbackByDefault: false },
    'with a CLIENTS_FILE: every interface, as before'
  )
  t.same(
    listenHost(loadConfig({ HOST: '0.0.0.0' })),
    { host: '0.0.0.0', loopbackByDefault: false },
    'HOST set: as set, authentication or not'
  )
  t.same(listenHost(loadConfig({ HOST: '::1', CLIENTS_FILE: '/c.json' })), {
    host: '::1',
    loopbackByDefault: false
  })

  // The process: the sandbox without keys and without HOST.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  const seen = await linesUntilDocs(child)
  const listening = seen
    .map((l) => String(l.msg))
    .filter((msg) => msg.startsWith('Server listening at'))
  t.equal(listening.length, 1, `one address: ${listening.join('; ')}`)
  t.match(listening[0], /^Server listening at http:\/\/127\.0\.0\.1:\d+$/, 'loopback')
  t.ok(
    seen.some((l) => l.msg === LOOPBACK_ADVICE && l.host === '127.0.0.1'),
    'and how to offer it to other machines'
  )
  t.match(LOOPBACK_ADVICE, /HOST=0\.0\.0\.0 together with a CLIENTS_FILE/)
})
