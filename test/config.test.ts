import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { isSandboxMode, loadConfig } from '../src/config/load.ts'
import { configProblems as problemsOf } from './helper.ts'

test('defaults: the contract\'s values, sandbox mode', async (t) => {
  const config = loadConfig({})
  t.equal(config.PORT, 3000)
  t.equal(config.HOST, '0.0.0.0')
  t.equal(config.UPSTREAM_API_KEY_HEADER, 'customs-api-key')
  t.equal(config.UPSTREAM_PATH_SEGMENT, 'HUB')
  t.equal(config.UPSTREAM_ENV, 'development')
  t.equal(config.UPSTREAM_TIMEZONE, '+07:00')
  t.equal(config.UPSTREAM_PARAM_PLACEMENT, 'query')
  t.equal(config.LOG_LEVEL, 'info')
  t.ok(isSandboxMode(config))
})

test('each problem is one line naming the variable', async (t) => {
  const problems = problemsOf({ PORT: 'abc', UPSTREAM_ENV: 'prod', UPSTREAM_TIMEZONE: '7', LOG_LEVEL: 'loud', UPSTREAM_OPERATIONS: '{not json' })
  t.equal(problems.length, 5, problems.join('\n'))
  for (const name of ['PORT', 'UPSTREAM_ENV', 'UPSTREAM_TIMEZONE', 'LOG_LEVEL', 'UPSTREAM_OPERATIONS']) {
    t.ok(problems.some(p => p.startsWith(`${name}:`)), `${name} named`)
  }
  t.ok(problems.every(p => !p.includes('\n')))
  t.ok(problems.find(p => p.startsWith('UPSTREAM_ENV'))?.includes('production, development'), 'allowed values listed')
})

test('whole-number settings are refused unless written in decimal digits, never truncated', async (t) => {
  const { ConfigSchema } = await import('../src/config/schema.ts')
  const integers = Object.entries(ConfigSchema.properties).filter(([, schema]) => (schema as { type?: string }).type === 'integer').map(([name]) => name)
  t.ok(integers.length >= 20, `${integers.length} whole-number settings`)
  for (const name of integers) {
    t.same(problemsOf({ [name]: '1.5' }), [`${name}: must be a whole number in decimal digits (such as 64)`], `${name}=1.5`)
  }
  for (const written of ['1e3', '0x10', '+5', '2.0', 'Infinity', '12abc']) {
    t.same(problemsOf({ UPSTREAM_MAX_CONNECTIONS: written }), ['UPSTREAM_MAX_CONNECTIONS: must be a whole number in decimal digits (such as 64)'], written)
  }
  t.equal(loadConfig({ UPSTREAM_MAX_CONNECTIONS: ' 12 ' }).UPSTREAM_MAX_CONNECTIONS, 12, 'spaces around are trimmed')
  t.equal(loadConfig({ CACHE_MAX_BYTES: '0' }).CACHE_MAX_BYTES, 0)
  t.match(problemsOf({ UPSTREAM_MAX_CONNECTIONS: '0' }), [/^UPSTREAM_MAX_CONNECTIONS: must be >= 1/], 'the range is still checked')
  // Inside the JSON of UPSTREAM_OPERATIONS too: 1.5 is not an integer, and is not made one.
  t.same(problemsOf({ UPSTREAM_OPERATIONS: '{"noblbc20":{"cacheTtlSeconds":1.5}}' }), ['UPSTREAM_OPERATIONS.noblbc20.cacheTtlSeconds: must be integer'])
  t.same(loadConfig({ UPSTREAM_OPERATIONS: '{"noblbc20":{"cacheTtlSeconds":15}}' }).UPSTREAM_OPERATIONS, { noblbc20: { cacheTtlSeconds: 15 } })
})

test('an upstream needs both addresses and its credentials', async (t) => {
  t.match(problemsOf({ UPSTREAM_HUB_URL: 'https://hub.example' }), [/^UPSTREAM_BASE_URL: must be set together with UPSTREAM_HUB_URL/])
  t.same(problemsOf({ UPSTREAM_HUB_URL: 'https://hub.example', UPSTREAM_BASE_URL: 'https://base.example' }).map(p => p.split(':')[0]),
    ['UPSTREAM_API_KEY', 'PLATFORM_ID', 'UPSTREAM_ACCESS_TOKEN'])
  t.match(problemsOf({ UPSTREAM_HUB_URL: 'ftp://hub', UPSTREAM_BASE_URL: 'https://b' }), [/^UPSTREAM_HUB_URL/])
})

test('operation overrides are checked against the operations table', async (t) => {
  const { resolveOperations } = await import('../src/upstream/resolve-operations.ts')
  const base = { UPSTREAM_HUB_URL: 'http://h', UPSTREAM_BASE_URL: 'http://b', UPSTREAM_API_KEY: 'k', UPSTREAM_ACCESS_TOKEN: 't', PLATFORM_ID: 'p' }
  t.throws(() => resolveOperations(loadConfig({ ...base, UPSTREAM_OPERATIONS: '{"nope":{}}' })), { message: /unknown operation "nope"/ })
  t.throws(() => resolveOperations(loadConfig({ ...base, UPSTREAM_OPERATIONS: '{"noblbc20":{"paramNames":{"x":"y"}}}' })), { message: /unknown parameter "x"/ })
  t.throws(() => resolveOperations(loadConfig({ ...base, UPSTREAM_OPERATIONS: '{"BC20ByNoPib":{"responseKey":"k"}}' })), { message: /does not answer under a key/ })
  const ops = resolveOperations(loadConfig({ ...base, UPSTREAM_OPERATIONS: '{"kontainerbc20":{"responseKey":"Data Kontainer BC20","headers":["authorization"]}}' }))
  t.equal(ops.get('kontainerbc20')?.responseKey, 'Data Kontainer BC20')
  t.same(ops.get('kontainerbc20')?.headers, ['authorization'])
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
  const address = /listening at (http:\/\/[^ ]+)/.exec(String(seen.at(-1)?.msg))?.[1]
  const res = await fetch(`${address}/v1/customs/bc20/bills-of-lading?npwp=012345678901000`)
  t.equal(res.status, 200)
  t.ok(((await res.json()) as { data: unknown[] }).data.length > 0, 'the sandbox answers with data')
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const [code] = await exited
  t.equal(code, 0)
})

test('.env.example lists every variable with its default', async (t) => {
  const { readFile } = await import('node:fs/promises')
  const { ConfigSchema } = await import('../src/config/schema.ts')
  const text = await readFile(new URL('../.env.example', import.meta.url), 'utf8')
  const defaults = loadConfig({}) as Record<string, unknown>
  for (const name of Object.keys(ConfigSchema.properties)) {
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
