import { test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { sandboxEnv, startSandbox } from '../../src/sandbox/index.ts'
import { connect, startRedisServer, until } from './redis-server.ts'

// The gateway with REDIS_URL: one connection set per process (commands and
// pub/sub), open once the app is ready, closed when it closes.

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
  t.equal(await others(), 2, 'one for commands, one for the event channel')

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
  t.ok(Date.now() - started < 6000, 'start-up waits a bounded time')
  const ready = await app.inject({ url: '/health/ready' })
  t.equal(ready.statusCode, 200)
  t.equal(ready.json().data.redis, 'down')
  await redis.start()
  await until(async () => (await app.inject({ url: '/health/ready' })).json().data.redis === 'up', 10_000, 'redis up')
  t.match((await app.inject({ url: '/metrics' })).body, /^gateway_redis_up 1$/m)
})
