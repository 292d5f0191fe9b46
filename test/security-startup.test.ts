import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { clientsFileProblems } from '../src/auth/clients.ts'
import { hashClientKey } from '../src/auth/keys.ts'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { writeTempFile } from './helper.ts'

/**
 * The real process as `npm start` runs it (dist/main.js, which tap's before step builds from
 * src/), and the key command as `npm run client-key` runs it.
 */

function run (args: string[], env: Record<string, string>) {
  // The built gateway starts in a fraction of the time tsx takes to compile it.
  const command = args[0] === 'dist/main.js' ? args : ['--import', 'tsx', ...args]
  return spawn(process.execPath, command, {
    env: { PATH: process.env.PATH ?? '', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
}

async function output (child: ReturnType<typeof run>): Promise<{ code: number, stdout: string, stderr: string }> {
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const [code] = await once(child, 'exit') as [number]
  return { code, stdout, stderr }
}

const UPSTREAM = { UPSTREAM_HUB_URL: 'http://127.0.0.1:9', UPSTREAM_BASE_URL: 'http://127.0.0.1:9', UPSTREAM_API_KEY: 'k', UPSTREAM_ACCESS_TOKEN: 't', PLATFORM_ID: 'p', PORT: '0', HOST: '127.0.0.1' }

test('with an upstream and no CLIENTS_FILE the server refuses to start, with one clear line', async (t) => {
  const { code, stderr, stdout } = await output(run(['dist/main.js'], UPSTREAM))
  t.equal(code, 1)
  const problems = stderr.trim().split('\n').filter(l => l.startsWith('config error:'))
  t.same(problems, ['config error: CLIENTS_FILE: is required when an upstream is configured ' +
    '(see docs/deployment.md#clients-and-keys)'], stderr)
  t.notMatch(stdout, /listening/)
})

test('a bad clients file stops start-up with a line per problem', async (t) => {
  const file = writeTempFile(t, JSON.stringify([{ name: 'yard-app', keySha256: 'nope', scopes: ['customs:read'] }]))
  const { code, stderr } = await output(run(['dist/main.js'], { ...UPSTREAM, CLIENTS_FILE: file }))
  t.equal(code, 1)
  t.match(stderr, /^config error: CLIENTS_FILE: entry 1 \("yard-app"\): keySha256: /m)
})

async function firstLines (child: ReturnType<typeof run>) {
  const seen: Array<Record<string, unknown>> = []
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  for await (const line of createInterface({ input: child.stdout })) {
    seen.push(JSON.parse(line) as Record<string, unknown>)
    if (String(seen.at(-1)?.msg).startsWith('Server listening')) break
  }
  const address = /listening at (http:\/\/[^ ]+)/.exec(String(seen.at(-1)?.msg))?.[1]
  // The output ended first: say why, rather than fail later on an undefined address.
  if (address === undefined) {
    const last = seen.at(-1)?.msg
    throw new Error(`the gateway did not start (exit ${String(child.exitCode)}); ` +
      `last line: ${String(last)}; stderr: ${stderr.slice(-2000)}`)
  }
  return { seen, address }
}

test('on the sandbox without CLIENTS_FILE, the first log line says so and that authentication is off', async (t) => {
  const child = run(['dist/main.js'], { PORT: '0', HOST: '127.0.0.1' })
  t.teardown(() => { child.kill('SIGKILL') })
  const { seen, address } = await firstLines(child)
  t.match(seen[0], { level: 40, authentication: 'off', msg: /built-in sandbox.*client authentication is OFF/ }, 'one first line, both facts')
  const res = await fetch(`${address}/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`)
  t.equal(res.status, 200, 'no key needed')
})

test('on the sandbox with a CLIENTS_FILE made by the key command, keys are required and the new key works', async (t) => {
  const made = await output(run(['scripts/client-key.ts', '--name', 'yard-app', '--scopes', 'customs:read,sp2:read', '--max', '100', '--window', '1 minute'], {}))
  t.equal(made.code, 0, made.stderr)
  const key = /^ {2}(cgw_[A-Za-z0-9_-]{43})$/m.exec(made.stdout)?.[1]
  const entryText = /^ {2}(\{.*\})$/m.exec(made.stdout)?.[1]
  t.ok(key, 'the key is printed')
  t.ok(entryText, 'the entry is printed')
  const entry = JSON.parse(entryText ?? '{}') as { keySha256: string }
  t.same(entry, { name: 'yard-app', keySha256: hashClientKey(key ?? ''), scopes: ['customs:read', 'sp2:read'], rateLimit: { max: 100, timeWindow: '1 minute' } })
  t.same(clientsFileProblems([entry]), [], 'a valid entry')

  const clientsFile = writeTempFile(t, JSON.stringify([entry]))
  const child = run(['dist/main.js'], { PORT: '0', HOST: '127.0.0.1', CLIENTS_FILE: clientsFile })
  t.teardown(() => { child.kill('SIGKILL') })
  const { seen, address } = await firstLines(child)
  t.match(seen[0], { authentication: 'on', msg: /built-in sandbox/ })
  t.notMatch(String(seen[0]?.msg), /OFF/)
  const url = `${address}/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  t.equal((await fetch(url)).status, 401, 'no key: 401')
  const ok = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
  t.equal(ok.status, 200, 'the new key works')
  t.equal(ok.headers.get('x-ratelimit-limit'), '100', 'with its limit')
  t.equal((await fetch(`${address}/v1/bookings/${F.bookingRequestId}/booked`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"booked":true}' })).status, 403, 'within its scopes only')
})

test('the key command refuses bad arguments', async (t) => {
  for (const args of [['--name', 'yard-app'], ['--name', 'bad name', '--scopes', 'customs:read'], ['--name', 'x', '--scopes', 'customs:write'], ['--name', 'x', '--scopes', 'customs:read', '--window', 'soon'], ['--name', 'x', '--scopes', 'events:read', '--events', 'everyone'], ['--nope']]) {
    const { code, stderr, stdout } = await output(run(['scripts/client-key.ts', ...args], {}))
    t.equal(code, 1, args.join(' '))
    t.match(stderr, /usage: npm run client-key/)
    t.notMatch(stdout, /cgw_/, 'no key printed')
  }
})

test('a hub over plain http:// to another machine is a warning at start-up; loopback is not', async (t) => {
  const file = writeTempFile(t, JSON.stringify([{ name: 'yard-app', keySha256: hashClientKey('k'), scopes: ['customs:read'] }]))
  const child = run(['dist/main.js'], {
    ...UPSTREAM,
    UPSTREAM_HUB_URL: 'http://10.255.255.1:8080',
    UPSTREAM_BASE_URL: 'https://base.example',
    CLIENTS_FILE: file
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const { seen } = await firstLines(child)
  const warnings = seen.filter(line => line.level === 40)
  t.match(warnings, [{ setting: 'UPSTREAM_HUB_URL', host: '10.255.255.1:8080', msg: /plain http:\/\/ to 10\.255\.255\.1:8080: the hub's credentials cross the network unencrypted/ }])
  t.equal(warnings.length, 1, 'https:// is not warned about')

  const { plainHttpWarnings } = await import('../src/config/plain-http.ts')
  const { loadConfig } = await import('../src/config/load.ts')
  const hubs = (hub: string, base = hub) => plainHttpWarnings(loadConfig({ UPSTREAM_HUB_URL: hub, UPSTREAM_BASE_URL: base, UPSTREAM_API_KEY: 'k', UPSTREAM_ACCESS_TOKEN: 't', PLATFORM_ID: 'p' })).map(w => w.setting)
  for (const loopback of ['http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010', 'http://127.8.9.10', 'http://[::ffff:127.0.0.1]:80']) t.same(hubs(loopback), [], loopback)
  t.same(hubs('http://hub.example.go.id', 'https://base.example.go.id'), ['UPSTREAM_HUB_URL'])
  t.same(hubs('http://192.168.1.10', 'http://localhost.example.com'), ['UPSTREAM_HUB_URL', 'UPSTREAM_BASE_URL'], 'a name that only starts like localhost is not loopback')
  const login = {
    UPSTREAM_API_KEY: 'k',
    PLATFORM_ID: 'p',
    UPSTREAM_CREDENTIALS: 'login',
    UPSTREAM_LOGIN_USERNAME: 'u',
    UPSTREAM_LOGIN_PASSWORD: 'p'
  }
  const plainBase = {
    ...login,
    UPSTREAM_HUB_URL: 'https://h',
    UPSTREAM_BASE_URL: 'http://login.example'
  }
  t.same(plainHttpWarnings(loadConfig(plainBase)).map(w => w.setting), ['UPSTREAM_BASE_URL'],
    'the login is under UPSTREAM_BASE_URL (or UPSTREAM_HUB_URL): warned with its address')
})

test('the key command writes an entry allowed to see every booked event', async (t) => {
  const made = await output(run(['scripts/client-key.ts', '--name', 'ops-monitor', '--scopes', 'events:read', '--events', 'all'], {}))
  t.equal(made.code, 0, made.stderr)
  const entry = JSON.parse(/^ {2}(\{.*\})$/m.exec(made.stdout)?.[1] ?? '{}') as Record<string, unknown>
  t.match(entry, { name: 'ops-monitor', scopes: ['events:read'], events: 'all' })
  t.same(clientsFileProblems([entry]), [])
})
