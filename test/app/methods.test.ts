import { connect } from 'node:net'
import { once } from 'node:events'
import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'

/**
 * Methods and Node's own refusals (docs/api.md#the-envelope-and-errors): a known path with the
 * wrong method is 405 METHOD_NOT_ALLOWED with `Allow`; HEAD works on the
 * lookups; a bad request line (400) and header fields too large (431) get
 * the envelope with a request id, like every other non-2xx.
 */

const LOOKUP = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
const OFFERS = `/v1/bookings/${F.bookingRequestId}/offers`

test('a known path with the wrong method is 405 with Allow; an unknown path stays ' +
  '404', async (t) => {
  const { app, sandbox } = await build(t)
  for (const [method, url, allow] of [
    ['DELETE', LOOKUP, 'GET, HEAD'],
    ['POST', LOOKUP, 'GET, HEAD'],
    ['PUT', `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading`, 'GET, HEAD'],
    ['GET', OFFERS, 'POST'],
    ['PATCH', `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`, 'POST'],
    ['POST', '/health/live', 'GET, HEAD'],
    ['DELETE', '/v1/events', 'GET, HEAD']
  ] as const) {
    const res = await app.inject({ method, url })
    t.equal(res.statusCode, 405, `${method} ${url}`)
    t.equal(res.headers.allow, allow, `${method} ${url}: Allow`)
    const body = res.json()
    t.equal(body.code, 'METHOD_NOT_ALLOWED')
    t.equal(body.error, 'Method Not Allowed')
    t.equal(body.requestId, res.headers['x-request-id'])
    t.match(body.message, new RegExp(`takes ${allow}, not ${method}$`))
  }
  const unknown = await app.inject({ method: 'DELETE', url: '/v1/customs/bc99/nothing' })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.headers.allow, undefined)
  t.equal(unknown.json().code, 'NOT_FOUND')
  t.equal(sandbox.count(), 0, 'none of it reached the hub')
})

test('405 holds with CORS on: the preflight route does not make every path known', async (t) => {
  const { app } = await build(t, { env: { CORS_ORIGINS: 'https://yard.example.co.id' } })
  t.equal((await app.inject({ method: 'DELETE', url: '/v1/nothing' })).statusCode, 404)
  const res = await app.inject({ method: 'DELETE', url: LOOKUP })
  t.equal(res.statusCode, 405)
  t.equal(res.headers.allow, 'GET, HEAD')
})

test('HEAD works on the lookups: the GET answer\'s status and headers, no body', async (t) => {
  const { app } = await build(t, {
    clients: [{ name: 'reader', key: 'key-reader', scopes: ['customs:read', 'sp2:read'] }]
  })
  const auth = { authorization: 'Bearer key-reader' }
  for (const url of [
    LOOKUP,
    `/v1/sp2/documents?npwp=${F.sp2.npwp}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}`,
    `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading`
  ]) {
    const get = await app.inject({ method: 'GET', url, headers: auth })
    const head = await app.inject({ method: 'HEAD', url, headers: auth })
    t.equal(head.statusCode, 200, `HEAD ${url}`)
    t.equal(head.body, '', 'no body')
    t.equal(head.headers['content-type'], get.headers['content-type'])
    t.equal(
      head.headers['content-length'],
      get.headers['content-length'],
      'the length of the GET answer'
    )
    t.ok(head.headers['x-request-id'])
  }
  const noKey = await app.inject({ method: 'HEAD', url: LOOKUP })
  t.equal(noKey.statusCode, 401, 'HEAD needs the GET route\'s scope')
})

/** Sends raw bytes to a listening gateway and returns the raw answer. */
async function raw (port: number, bytes: string): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  socket.write(bytes)
  let answer = ''
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString('latin1') })
  await once(socket, 'close')
  return answer
}

function parse (answer: string): {
  status: number
  headers: Record<string, string>
  body: Record<string, unknown>
} {
  const [head = '', body = ''] = answer.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()])
  )
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: JSON.parse(body) as Record<string, unknown>
  }
}

test('Node\'s own refusals come in the envelope with a request id', async (t) => {
  const { app, logs } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as { port: number }).port

  const badLine = parse(await raw(port, 'GARBAGE\r\n\r\n'))
  t.equal(badLine.status, 400)
  t.match(badLine.body, {
    statusCode: 400,
    code: 'VALIDATION_FAILED',
    error: 'Bad Request',
    message: 'The request is not valid HTTP/1.1',
    requestId: /^[0-9a-f-]{36}$/
  })
  t.equal(badLine.headers['x-request-id'], badLine.body.requestId, 'the id in the header too')
  t.match(badLine.headers['content-type'], /^application\/json/)

  const huge = parse(
    await raw(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
  )
  t.equal(huge.status, 431)
  t.match(huge.body, {
    statusCode: 431,
    code: 'HEADERS_TOO_LARGE',
    error: 'Request Header Fields Too Large',
    requestId: /^[0-9a-f-]{36}$/
  })
  t.notMatch(JSON.stringify(huge.body), /aaaa/, 'nothing of the request is echoed')

  t.ok(
    logs.some(
      (l) => l.msg === 'request refused by the HTTP parser' && l.requestId === huge.body.requestId
    ),
    'the refusal is logged with its id'
  )
})
