import { Writable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import pino from 'pino'
import { test } from 'tap'
import { AccessLog } from '../../src/logging/access-log.ts'
import { serializeRequest } from '../../src/logging/request-serializer.ts'
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

test('a response that failed is one error line with the request, the status and the error', (t) => {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
      done()
    }
  })
  const log = pino({ level: 'info', serializers: { req: serializeRequest } }, stream)
  const request = { log, method: 'GET', url: '/v1/x', host: 'gw', ip: '127.0.0.1' }
  const reply = { log, statusCode: 200, elapsedTime: 12.5 }
  new AccessLog().requestCompleted(
    new Error('premature close'),
    request as unknown as FastifyRequest,
    reply as unknown as FastifyReply
  )
  t.match(lines, [{
    level: 50,
    msg: 'request errored',
    req: { method: 'GET', url: '/v1/x' },
    err: { message: 'premature close' },
    responseTime: 12.5
  }])
  t.end()
})
