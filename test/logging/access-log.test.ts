import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'

const LOOKUP = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`

test('at info, one line a request, as it ends: the request, the status, the time', async (t) => {
  const { app, logs } = await build(t, { logLevel: 'info' })
  const res = await app.inject({ url: LOOKUP, headers: { 'x-request-id': 'one-line' } })
  t.equal(res.statusCode, 200)
  const lines = logs.filter((line) => line.requestId === 'one-line')
  t.same(lines.map((line) => line.msg), ['request completed'], 'one line, no incoming request')
  t.match(lines[0], {
    level: 30,
    req: { method: 'GET', url: LOOKUP },
    res: { statusCode: 200 },
    responseTime: Number
  })
  // No headers: pino redacts none under `req` (app.ts redactPaths), so none may be written there.
  const shown = ['host', 'method', 'remoteAddress', 'remotePort', 'url']
  t.same(Object.keys(lines[0]!.req as object).filter((key) => !shown.includes(key)), [])
  t.same(Object.keys(lines[0]!.res as object), ['statusCode'])
})

test('at debug, the incoming request line comes first', async (t) => {
  const { app, logs } = await build(t, { logLevel: 'debug' })
  await app.inject({ url: LOOKUP, headers: { 'x-request-id': 'two-lines' } })
  const lines = logs.filter((line) => line.requestId === 'two-lines')
  t.match(lines[0], { level: 20, msg: 'incoming request', req: { url: LOOKUP } })
  t.match(lines.at(-1), { level: 30, msg: 'request completed', res: { statusCode: 200 } })
})

test('a refused request\'s line carries its status', async (t) => {
  const { app, logs } = await build(t, { logLevel: 'info' })
  const res = await app.inject({
    url: '/v1/customs/bc20/bills-of-lading?npwp=12', headers: { 'x-request-id': 'refused' }
  })
  t.equal(res.statusCode, 400)
  const ended = logs.filter((l) => l.requestId === 'refused' && l.msg === 'request completed')
  t.match(ended, [{ req: { method: 'GET' }, res: { statusCode: 400 } }])
})
