import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { sandboxEnv, startSandbox } from '../../src/sandbox/index.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { connect, startRedisServer, startSentinel, until } from './redis-server.ts'

// The gateway with REDIS_URL: one connection set per process (commands and
// the event stream's reader), open once the app is ready, closed when it closes.

test('a gateway with REDIS_URL holds two connections to Redis while it runs and none once closed', async (t) => {
  const redis = await startRedisServer(t)
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const probe = await connect(t, redis)
  // CLIENT LIST counts the probe itself.
  const others = async () => String(await probe.client.call('CLIENT', 'LIST')).trim().split('\n').length - 1
  t.equal(await others(), 0)

  const app = await buildApp({ config: resolveConfig({ ...sandboxEnv(sandbox.url), REDIS_URL: redis.url, LOG_LEVEL: 'warn' }), sandbox: true }, false)
  t.equal(app.state.redis?.health(), 'up', 'ready only once Redis answers')
  t.ok(app.state.lookupTier, 'the shared lookup tier is there for the hub client')
  await until(async () => await others() === 2, 5000, 'two connections')
  t.equal(await others(), 2, 'one for commands, one reading the event stream')

  await app.close()
  await until(async () => await others() === 0, 5000, 'connections closed')
  t.equal(await others(), 0, 'closed with the app')
})

test('without REDIS_URL the state is in memory: no Redis health, no shared lookup tier', async (t) => {
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const app = await buildApp({ config: resolveConfig({ ...sandboxEnv(sandbox.url), LOG_LEVEL: 'warn' }), sandbox: true }, false)
  t.teardown(() => app.close())
  t.equal(app.state.redis, undefined)
  t.equal(app.state.lookupTier, undefined)
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.json().data.redis, undefined, 'readiness says nothing of Redis')
  t.notMatch((await app.inject({ url: '/metrics' })).body, /gateway_redis_up/, 'nor do the metrics')
})

test('a gateway whose Redis is down starts all the same, reports it, and uses it once it answers', async (t) => {
  const redis = await startRedisServer(t)
  await redis.stop()
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const started = Date.now()
  const app = await buildApp({ config: resolveConfig({ ...sandboxEnv(sandbox.url), REDIS_URL: redis.url, LOG_LEVEL: 'warn' }), sandbox: true }, false)
  t.teardown(() => app.close())
  // It gives Redis 3 s; without that bound it would wait for Redis, here forever. A loaded
  // machine's build of the app takes seconds more.
  t.ok(Date.now() - started < 30_000, 'start-up waits a bounded time')
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  t.equal(ready.json().data.redis, 'down')
  await redis.start()
  await until(async () => (await app.inject({ url: '/health/ready' })).json().data?.redis === 'up', 10_000, 'redis up')
  t.match((await app.inject({ url: '/metrics' })).body, /^gateway_redis_up 1$/m)
})

test('the Redis password reaches no log line and no answer, Redis up or down', async (t) => {
  const password = 'redis-pass-5c0d9e'
  const redis = await startRedisServer(t, { user: { name: 'gateway', password } })
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const lines: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _encoding, done) { lines.push(chunk.toString()); done() } })
  const app = await buildApp({ config: resolveConfig({ ...sandboxEnv(sandbox.url), REDIS_URL: redis.url, LOG_LEVEL: 'debug' }), sandbox: true }, { level: 'debug', stream })
  t.teardown(() => app.close())
  t.equal(app.state.redis?.health(), 'up', 'connected with the credentials')
  app.log.info({ config: app.config }, 'a line that logs the configuration')

  const answers: string[] = []
  const write = async () => app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true }, headers: { 'idempotency-key': `k-${answers.length}` } })
  const first = await write()
  t.equal(first.statusCode, 200)
  answers.push(first.body)
  await redis.stop()
  await until(() => app.state.redis?.health() === 'down', 5000, 'redis down')
  const refused = await write()
  t.equal(refused.statusCode, 503)
  answers.push(refused.body, JSON.stringify(refused.headers))
  for (const url of ['/health/ready', '/metrics']) answers.push((await app.inject({ url })).body)
  // Reconnection attempts fail meanwhile, and are logged at debug level.
  await new Promise(resolve => setTimeout(resolve, 300))

  t.ok(lines.some(line => line.includes('redis down')), 'the outage is logged')
  for (const text of [...lines, ...answers]) t.notOk(text.includes(password), 'no password')
  t.ok(lines.some(line => line.includes('[Redacted]')), 'the configuration line has it redacted')
})

test('with REDIS_SENTINELS the gateway finds the master through them, with their password read from its file', async (t) => {
  const master = await startRedisServer(t, { user: { name: 'gateway', password: 'master-pw-8a1f' } })
  const sentinel = await startSentinel(t, master, { password: 'sentinel-pw-02bd', masterAuth: { user: 'gateway', password: 'master-pw-8a1f' } })
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const dir = mkdtempSync(join(tmpdir(), 'gateway-sentinel-secret-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const passwordFile = join(dir, 'sentinel-password')
  writeFileSync(passwordFile, 'sentinel-pw-02bd\n')
  const env = { ...sandboxEnv(sandbox.url), REDIS_URL: 'redis://gateway:master-pw-8a1f@mymaster', REDIS_SENTINELS: sentinel.address, LOG_LEVEL: 'warn' }
  const app = await buildApp({ config: resolveConfig({ ...env, REDIS_SENTINEL_PASSWORD_FILE: passwordFile }), sandbox: true }, false)
  t.teardown(() => app.close())
  t.equal(app.state.redis?.health(), 'up', 'connected to the master the Sentinel named')
  const write = await app.inject({ method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true }, headers: { 'idempotency-key': 'through-sentinel' } })
  t.equal(write.statusCode, 200)
  const onMaster = await connect(t, master, { keyPrefix: '' })
  t.equal((await onMaster.client.keys('cgw:idempotency:*')).length, 1, 'the claim is on the master')

  // Read by the config loader, as every secret file (config/secret-files.ts).
  t.throws(() => resolveConfig({ ...env, REDIS_SENTINEL_PASSWORD_FILE: join(dir, 'missing') }),
    { name: 'ConfigError', problems: [`REDIS_SENTINEL_PASSWORD_FILE: cannot read ${join(dir, 'missing')} (no such file)`] }, 'a missing file stops start-up')
  writeFileSync(passwordFile, '\n')
  t.throws(() => resolveConfig({ ...env, REDIS_SENTINEL_PASSWORD_FILE: passwordFile }),
    { name: 'ConfigError', problems: [`REDIS_SENTINEL_PASSWORD_FILE: ${passwordFile} is empty`] })
})
