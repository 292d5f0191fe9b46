import { Redis } from 'ioredis'
import { test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { SANDBOX_FIXTURES as F, sandboxEnv, startSandbox } from '../../src/sandbox/index.ts'
import { RESILIENCE_OFF, testProfile, writeClientsFile, type TestClient } from '../helper.ts'
import { startTcpProxy } from '../tcp-proxy.ts'
import { startRedisServer, until } from './redis-server.ts'

// A write's key is marked `sending` as the last thing before its request
// leaves, not before the call path's other steps: a replica that dies while
// its write waits there (here, for the hub's login) leaves the key claimed,
// free once its lease ends, instead of unknown for good. And it is marked
// once: a request the hub refuses with a 401 is sent again with a new token.

const WRITER: TestClient = { name: 'yard-app', key: 'key-yard', scopes: ['bookings:write'] }
const PREFIX = 'cgw-mark:'
// The booked notification: a write that carries the hub's token.
const BOOKED = `/v1/bookings/${F.bookingRequestId}/booked`

test('a write is marked sending after its login, once though a 401 sends it again', async (t) => {
  const redis = await startRedisServer(t)
  const sandbox = await startSandbox()
  t.teardown(() => sandbox.close())
  // The hub is reached through a relay that can hold its connections.
  const hub = await startTcpProxy(t, Number(new URL(sandbox.url).port))
  const raw = new Redis(redis.url)
  t.teardown(() => raw.disconnect())
  const config = resolveConfig({
    ...sandboxEnv(`http://127.0.0.1:${hub.port}`),
    ...RESILIENCE_OFF,
    LOG_LEVEL: 'warn',
    CLIENTS_FILE: writeClientsFile(t, [WRITER]),
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: PREFIX,
    // Seconds, for a loaded machine: a command that timed out would refuse the write (503).
    REDIS_COMMAND_TIMEOUT_MS: '3000',
    UPSTREAM_CREDENTIALS: 'login',
    UPSTREAM_ACCESS_TOKEN: ''
  })
  // The sandbox's profile: it gives the login's address, which the hub's document does not.
  const app = await buildApp({ config, sandbox: true, profile: testProfile() }, false)
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  if (await app.state.redis?.whenUp(60_000) !== true) throw new Error('no Redis')
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  t.equal(sandbox.count('login'), 0, 'no login yet: the write will need one')

  const states = async (): Promise<unknown[]> => {
    const keys = await raw.keys(`${PREFIX}idempotency:*`)
    const values = keys.length === 0 ? [] : await raw.mget(keys)
    return values.map(value => (JSON.parse(value ?? '{}') as { state?: unknown }).state)
  }
  const post = (key: string) => fetch(`${base}${BOOKED}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${WRITER.key}`,
      'content-type': 'application/json',
      'idempotency-key': key
    },
    body: JSON.stringify({ booked: true, note: key })
  })
  hub.hold()
  const answer = post('mark-1')
  await until(() => hub.held > 0, 5000, 'the login waits at the relay')
  t.same(await states(), ['claimed'], 'while the login waits, the key is claimed: nothing marked')
  t.equal(sandbox.count('DetilBooking/isBooked'), 0)

  hub.release()
  const res = await answer
  t.equal(res.status, 200, 'then the key is marked and the write sent')
  t.equal(sandbox.count('login'), 1)
  t.equal(sandbox.count('DetilBooking/isBooked'), 1)
  t.same(await states(), ['completed'])

  // The hub refuses the token (401): the credentials step sends again with a new one. The key
  // was marked once, before the first request; the second is the same write, not a new mark.
  sandbox.expireTokens()
  const again = await post('mark-2')
  t.equal(again.status, 200, 'sent again with a new token')
  t.equal(sandbox.count('DetilBooking/isBooked'), 3, 'the refused request and the one answered')
  t.same(await states(), ['completed', 'completed'])
})
