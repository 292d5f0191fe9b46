import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { SANDBOX_FIXTURES as F, sandboxEnv, startSandbox } from '../../src/sandbox/index.ts'
import { RESILIENCE_OFF, writeClientsFile, type TestClient } from '../helper.ts'
import { startTcpProxy } from '../tcp-proxy.ts'
import { startRedisServer, until } from './redis-server.ts'

// The race an outside fault run found, replayed on purpose: replica A's
// claim reaches Redis but its reply is lost, and A cannot reach Redis again
// for longer than the claim's lease. A retry on replica B must not hear
// OUTCOME_UNKNOWN for a write nothing sent, and once A is back, nothing it
// does may change the key's verdict.

const WRITER: TestClient = { name: 'yard-app', key: 'key-yard', scopes: ['bookings:write'] }
const PREFIX = 'cgw-lost:'
const OFFERS = `/v1/bookings/${F.bookingRequestId}/offers`
const OFFER = { serviceOrderId: 'SO-LOST-1', price: 1250000.5, offeredAt: '2024-03-01T08:15:00Z' }

interface Verdict { status: number, code?: string, replayed: boolean, hubCalls: number }

test('a lost claim reply: the key is free after its lease, and no verdict changes', async (t) => {
  const redis = await startRedisServer(t)
  const proxy = await startTcpProxy(t, redis.port)
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  const raw = new Redis(redis.url)
  t.teardown(() => raw.disconnect())
  const env = {
    ...sandboxEnv(sandbox.url),
    ...RESILIENCE_OFF,
    LOG_LEVEL: 'warn',
    CLIENTS_FILE: writeClientsFile(t, [WRITER]),
    REDIS_KEY_PREFIX: PREFIX,
    // Seconds, for a loaded machine: a hub call or a command that times out would change the
    // verdicts this test is about. The claim's lease is the deadline plus 5 s.
    REDIS_COMMAND_TIMEOUT_MS: '3000',
    UPSTREAM_DEADLINE_MS: '5000'
  }
  const start = async (url: string): Promise<{ app: FastifyInstance, base: string }> => {
    const config = resolveConfig({ ...env, REDIS_URL: url })
    const app = await buildApp({ config, sandbox: true }, false)
    t.teardown(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    if (await app.state.redis?.whenUp(60_000) !== true) throw new Error('no Redis')
    return { app, base: `http://127.0.0.1:${(app.server.address() as { port: number }).port}` }
  }
  // A reaches Redis through the proxy, B directly.
  const a = await start(`redis://127.0.0.1:${proxy.port}`)
  const b = await start(redis.url)

  const hubCalls = () => sandbox.requests.filter(each => each.operation === 'DetilBooking').length
  async function post (base: string): Promise<Verdict> {
    const res = await fetch(`${base}${OFFERS}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${WRITER.key}`,
        'content-type': 'application/json',
        'idempotency-key': 'lost-claim-1'
      },
      body: JSON.stringify(OFFER)
    })
    const { code } = await res.json() as { code?: string }
    const replayed = res.headers.get('idempotent-replayed') === 'true'
    const status = res.status
    return { status, ...(code === undefined ? {} : { code }), replayed, hubCalls: hubCalls() }
  }

  // The claim is a call of the gateway's Redis function named so.
  proxy.dropRepliesFrom('stateClaim')
  const first = post(a.base)
  const claims = async () => (await raw.keys(`${PREFIX}idempotency:*`)).length
  await until(async () => await claims() === 1, 5000, 'the claim reached Redis')
  // Redis is gone for A (killed, or the network), the claim's reply lost; A's reconnections wait.
  proxy.cut()
  proxy.hold()
  const verdicts: Verdict[] = [await first]
  t.match(verdicts[0], { status: 503, code: 'IDEMPOTENCY_UNAVAILABLE', hubCalls: 0 },
    'A refuses: it cannot tell what Redis holds')

  // B's retry waits while the claim stands, then gets what the key's state says.
  verdicts.push(await post(b.base))
  proxy.release()
  const { state } = a.app
  const settled = () => state.redis?.health() === 'up' && state.idempotency.pending() === 0
  await until(settled, 10_000, 'A back, nothing waiting')
  verdicts.push(await post(b.base), await post(a.base))

  const told = (v: Verdict) => `${v.status} ${v.code ?? ''}${v.replayed ? ' (replayed)' : ''}`
  t.comment(verdicts.map(v => `${told(v)} after ${v.hubCalls} hub calls`).join('; '))
  const unknown = verdicts.findIndex(v => v.code === 'OUTCOME_UNKNOWN')
  t.ok(verdicts.every(v => v.code !== 'OUTCOME_UNKNOWN' || v.hubCalls > 0),
    'no OUTCOME_UNKNOWN for a write the hub never got')
  t.ok(unknown === -1 || verdicts.slice(unknown).every(v => v.code === 'OUTCOME_UNKNOWN'),
    'a key told unknown stays unknown')
  t.equal(hubCalls(), 1, 'the hub got the write once')
  const replay = { status: 200, replayed: true }
  t.match(verdicts.slice(1), [{ status: 200, replayed: false }, replay, replay],
    'sent by the retry once the claim was free, then replayed')
})
