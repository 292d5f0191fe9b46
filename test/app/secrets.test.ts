import { createServer } from 'node:http'
import fc from 'fast-check'
import { test } from 'tap'
import { redactQuery } from '../../src/logging/request-serializer.ts'
import {
  hubError, hubMessage, MESSAGE_LIMIT, pick, scrubSecrets, SECRET_PIECE
} from '../../src/upstream/hub-message.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'

const API_KEY = 'sk-live-7d1e0c9b2a4f'
const TOKEN = 'Bearer tok-live-3c5e8a1f9d0b'
const CALLER = 'Bearer caller-secret-66a1'

const REQUESTS: Array<{ method?: 'GET' | 'POST'; url: string; payload?: object }> = [
  { url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` },
  { url: `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading` },
  { url: `/v1/sp2/documents?npwp=${F.sp2.npwp}&blNo=${F.sp2.blNo}&blDate=${F.sp2.blDate}` },
  { url: '/v1/customs/bc261/containers?blNo=SBX-401' },
  { url: '/v1/customs/bc261/containers?blNo=SBX-500' },
  { url: '/v1/customs/bc261/containers?blNo=SBX-MALFORMED' },
  { url: '/v1/customs/bc261/containers?blNo=SBX-RESET' },
  { url: '/v1/customs/bc261/containers?blNo=bad value' },
  {
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    payload: { serviceOrderId: 'SO-1', price: 1, offeredAt: '2024-03-01T08:15:00+07:00' }
  },
  { method: 'POST', url: `/v1/bookings/${F.bookingRequestId}/booked`, payload: { booked: true } },
  { method: 'POST', url: '/v1/bookings/SBX-403/booked', payload: { booked: true } },
  { url: '/health/ready' },
  { url: '/metrics' },
  { url: '/openapi.json' },
  { url: '/nowhere' }
]

test('secrets never reach a response, a header or a log line', async (t) => {
  const { app, rawLogs } = await build(t, {
    env: { UPSTREAM_API_KEY: API_KEY, UPSTREAM_ACCESS_TOKEN: TOKEN, LOG_LEVEL: 'trace' },
    sandbox: { apiKey: API_KEY, accessToken: TOKEN }
  })
  let served = 0
  for (const r of REQUESTS) {
    const res = await app.inject({
      method: r.method ?? 'GET',
      url: r.url,
      headers: { authorization: CALLER },
      ...(r.payload ? { payload: r.payload } : {})
    })
    if (res.statusCode === 200) served++
    const seen = res.body + JSON.stringify(res.headers)
    for (const secret of [API_KEY, TOKEN, 'tok-live-3c5e8a1f9d0b', CALLER]) {
      t.notOk(seen.includes(secret), `${r.url}: response carries no secret`)
    }
  }
  t.ok(served >= 6, 'the credentials worked: real answers came back')
  t.ok(rawLogs.length > 20, 'logs were captured')
  const logs = rawLogs.join('\n')
  for (const secret of [API_KEY, 'tok-live-3c5e8a1f9d0b', 'caller-secret-66a1']) {
    t.notOk(logs.includes(secret), `no log line carries ${secret.slice(0, 8)}…`)
  }
})

test('a logged object holding the secrets is redacted', async (t) => {
  const { app, rawLogs } = await build(t, {
    env: { UPSTREAM_API_KEY: API_KEY, UPSTREAM_ACCESS_TOKEN: TOKEN },
    sandbox: { apiKey: API_KEY, accessToken: TOKEN }
  })
  // A careless log of the whole configuration or of request headers must not leak them.
  app.log.info(
    { config: app.config, req: { headers: { authorization: CALLER, 'customs-api-key': API_KEY } } },
    'careless'
  )
  const line = rawLogs.find(l => l.includes('careless')) ?? ''
  t.ok(line.length > 0)
  t.notOk(line.includes(API_KEY))
  t.notOk(line.includes('tok-live-3c5e8a1f9d0b'))
  t.notOk(line.includes('caller-secret-66a1'))
})

// --- the hub's message: what a hub echoing our secrets back can make us show --------------

/** Every 8-character piece of each secret (and of the token without its scheme), case-folded. */
function piecesOf (secrets: readonly string[]): string[] {
  const out: string[] = []
  for (const secret of secrets) {
    const bare = secret.replace(/^[A-Za-z]+ +/, '').toLowerCase()
    for (let i = 0; i + SECRET_PIECE <= bare.length; i++) out.push(bare.slice(i, i + SECRET_PIECE))
  }
  return out
}

const secretText = fc.stringMatching(/^[A-Za-z0-9._~+/=-]{12,64}$/)
const filler = fc.string({
  unit: fc.constantFrom(' ', '!', '?', '#', ',', ';', '\u00e4', '\u00df', '(', ')', '"'),
  maxLength: 40
})
/**
 * How a hub might echo a secret: whole, in another case, without its scheme, or a piece of it (its
 * own cut).
 */
function echoed (secret: string): fc.Arbitrary<string> {
  const bare = secret.replace(/^[A-Za-z]+ +/, '')
  return fc.oneof(
    fc.constant(secret),
    fc.constant(secret.toLowerCase()),
    fc.constant(secret.toUpperCase()),
    fc.constant(bare),
    fc.constant(bare.toLowerCase()),
    fc
      .array(fc.boolean(), { minLength: bare.length, maxLength: bare.length })
      .map((flips) =>
        [...bare].map((c, i) => (flips[i] === true ? c.toUpperCase() : c.toLowerCase())).join('')
      ),
    fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => {
      const from = a % (bare.length - SECRET_PIECE + 1)
      const length = SECRET_PIECE + (b % (bare.length - from - SECRET_PIECE + 1))
      return bare.slice(from, from + length)
    })
  )
}

test('scrubSecrets: no 8-character piece of a secret survives, in any case, with or without its ' +
  'scheme, wherever it is cut', async (t) => {
  const scenario = fc
    .tuple(secretText, secretText, fc.constantFrom('Bearer ', 'Token ', 'bearer ', ''))
    .chain(([key, token, scheme]) => {
      const secrets = [key, `${scheme}${token}`]
      const part = fc.oneof(filler, echoed(key), echoed(`${scheme}${token}`))
      return fc.tuple(
        fc.constant(secrets),
        fc.array(part, { minLength: 1, maxLength: 8 }).map((parts) => parts.join('')),
        fc.nat(700)
      )
    })
  fc.assert(
    fc.property(scenario, ([secrets, message, cut]) => {
      const pieces = piecesOf(secrets)
      // Scrubbed whole, and scrubbed as a hub answer cut anywhere (the hub's cut, then ours at
      // 500).
      for (const out of [
        scrubSecrets(message, secrets),
        hubMessage(400, JSON.stringify({ message: message.slice(cut) }), secrets) ?? '',
        hubMessage(422, JSON.stringify({ message: 'x'.repeat(cut) + message }), secrets) ?? ''
      ]) {
        const folded = out.toLowerCase()
        const leaked = pieces.find((piece) => folded.includes(piece))
        if (leaked !== undefined) {
          throw new Error(
            `${JSON.stringify(leaked)} of a secret survived in ${JSON.stringify(out)}`
          )
        }
        if (out.length > MESSAGE_LIMIT && out !== scrubSecrets(message, secrets)) {
          throw new Error('longer ' + 'than the limit')
        }
      }
    }),
    { seed: 1414, numRuns: 3000 }
  )
  t.pass('3000 generated messages')

  // Text without a secret in it is left alone.
  fc.assert(
    fc.property(secretText, filler, (secret, text) => scrubSecrets(text, [secret]) === text),
    { seed: 14, numRuns: 500 }
  )
  t.equal(
    scrubSecrets('token ABCDEFGH12345 expired', ['Bearer abcdefgh12345']),
    'token [redacted] expired'
  )
  t.equal(
    scrubSecrets('key was sk-live-7d1e…', ['sk-live-7d1e0c9b2a4f']),
    'key was [redacted]…',
    "the hub's own cut of a key"
  )
})

test('hubMessage: a 4xx\'s message only; 5xx bodies are not passed on', async (t) => {
  const body = JSON.stringify({ message: 'at /srv/hub/app.py line 12 (db01.internal)' })
  t.equal(hubMessage(400, body, []), 'at /srv/hub/app.py line 12 (db01.internal)')
  t.equal(hubMessage(404, body, []), 'at /srv/hub/app.py line 12 (db01.internal)')
  for (const status of [500, 502, 503, 504, 200, 302]) {
    t.equal(hubMessage(status, body, []), undefined, String(status))
  }
  t.equal(hubMessage(400, 'not json', []), undefined)
  t.equal(hubMessage(400, '{"message":""}', []), undefined)
  t.equal(hubMessage(400, JSON.stringify({ message: 'y'.repeat(2000) }), [])?.length, MESSAGE_LIMIT)
})

test('hubError: the text in a list of errors, by index (errors.0.detail), scrubbed', async (t) => {
  const body = JSON.stringify({ errors: [{ detail: `bad key ${API_KEY}` }, { detail: 'second' }] })
  const fields = ['message', 'errors.0.detail']
  const found = hubError(400, body, [API_KEY], fields)
  t.same(found, { text: 'bad key [redacted]', field: 'errors.0.detail' })
  t.same(hubError(400, body, [], ['errors.1.detail']), { text: 'second', field: 'errors.1.detail' })
  for (const path of ['errors.2.detail', 'errors.x.detail', 'errors.01.detail', 'errors.length']) {
    t.equal(pick(JSON.parse(body), path), undefined, path)
  }
  t.equal(pick({ a: {} }, 'a.constructor'), undefined, 'own members only')
  t.equal(pick([['x']], '0.0'), 'x')
})

test("a hub echoing the gateway's key and token in pieces and other cases: none of it reaches " +
  'the caller', async (t) => {
  const key = 'sk-live-7d1e0c9b2a4fQ8'
  const token = 'tok-live-3c5e8a1f9d0bZZ'
  // A small real hub that answers every call with an error echoing what it was sent.
  const echoes: Array<(auth: string, apiKey: string) => { status: number; message: string }> = [
    (auth) => ({ status: 401, message: `token ${auth.replace(/^Bearer /, '')} is expired` }),
    (_auth, apiKey) => ({ status: 403, message: `key ${apiKey.toLowerCase()} is not allowed` }),
    (auth) => ({ status: 400, message: `bad request: ${'.'.repeat(480)}${auth.toUpperCase()}` }),
    (_auth, apiKey) => ({ status: 422, message: `key ${apiKey.slice(0, 12)}… refused` }),
    () => ({ status: 500, message: 'Traceback at /srv/hub/app.py line 12 on db01.internal' })
  ]
  let next = 0
  const hub = createServer((req, res) => {
    const echo = echoes[next++ % echoes.length]!(
      String(req.headers.authorization),
      String(req.headers['customs-api-key'])
    )
    res
      .writeHead(echo.status, { 'content-type': 'application/json' })
      .end(JSON.stringify({ message: echo.message }))
  })
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    hub.close()
  })
  const url = `http://127.0.0.1:${(hub.address() as { port: number }).port}`
  const { app, rawLogs } = await build(t, {
    env: {
      UPSTREAM_HUB_URL: url,
      UPSTREAM_BASE_URL: url,
      UPSTREAM_API_KEY: key,
      UPSTREAM_ACCESS_TOKEN: `Bearer ${token}`
    }
  })
  const pieces = piecesOf([key, token])
  const messages: Array<string | undefined> = []
  for (let i = 0; i < echoes.length; i++) {
    const res = await app.inject({ url: `/v1/customs/bc261/containers?blNo=BL${i}` })
    t.ok(res.statusCode >= 400)
    messages.push(res.json().upstreamMessage)
    const seen = (res.body + JSON.stringify(res.headers)).toLowerCase()
    t.notOk(
      pieces.some((piece) => seen.includes(piece)),
      `answer ${i + 1} carries no piece of a secret: ${String(res.json().upstreamMessage)}`
    )
  }
  t.match(messages[0], /^token \[redacted\] is expired$/)
  t.match(messages[1], /^key \[redacted\] is not allowed$/)
  t.equal(messages[2]?.length, MESSAGE_LIMIT)
  t.match(messages[3], /^key \[redacted\]… refused$/)
  t.equal(messages[4], undefined, 'a 5xx message is not passed on')
  const logs = rawLogs.join('\n').toLowerCase()
  t.notOk(
    pieces.some((piece) => logs.includes(piece)),
    'nor does the log'
  )
})

test("a key sent in the URL never reaches a log line; the route's own parameters stay " +
  'readable', async (t) => {
  const key = 'cgw_Qm9vZ2llV29vZ2llU2VjcmV0S2V5MDEyMzQ1Njc4OWFiY2Q'
  for (const clients of [
    undefined,
    [{ name: 'yard-app', key: 'other-key', scopes: ['customs:read' as const] }]
  ]) {
    const { app, rawLogs } = await build(t, {
      ...(clients === undefined ? {} : { clients }),
      logLevel: 'trace'
    })
    const urls = [
      `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}&access_token=${key}`,
      `/v1/customs/bc20/bills-of-lading?access_token=${key}&npwp=${F.taxpayer.npwp}`,
      `/v1/customs/bc20/bills-of-lading?npwp=${key}`,
      `/v1/customs/bc20/bills-of-lading?${key}`,
      `/v1/customs/bc20/bills-of-lading?${encodeURIComponent(key)}=1`,
      `/v1/events?access_token=${key}`,
      `/health/ready?token=${key}`,
      `/nowhere?access_token=${key}`,
      `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}&k=%E0%A4%A${key}`
    ]
    for (const url of urls) await app.inject({ url })
    const lines = rawLogs.filter((line) => line.includes('"url"'))
    t.ok(lines.length >= urls.length, `${lines.length} request lines`)
    t.same(
      rawLogs.filter((line) => line.includes(key.slice(4, 24))),
      [],
      `no log line carries the key (authentication ${clients === undefined ? 'off' : 'on'})`
    )
    t.ok(
      lines.some((line) =>
        line.includes(
          `"url":"/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}&access_token=[redacted]"`
        )
      ),
      "the route's parameter is kept, the unknown one redacted"
    )
  }
})

test('redactQuery keeps the values of the named parameters that fit their rule only', async (t) => {
  const known = new Map([
    ['npwp', { maxLength: 24 }],
    ['blNo', { pattern: '^[A-Za-z0-9][A-Za-z0-9./-]{0,34}$' }]
  ])
  t.equal(
    redactQuery('/a?npwp=1234567890123456789012345&blNo=A%20B', known),
    '/a?npwp=[redacted]&blNo=[redacted]',
    'too long, or not its pattern'
  )
  t.equal(redactQuery('/a', known), '/a')
  t.equal(
    redactQuery('/a?npwp=1&blNo=A%2FB&x=secret&&y', known),
    '/a?npwp=1&blNo=A%2FB&x=[redacted]&&y'
  )
  t.equal(redactQuery('/a?npwp', known), '/a?npwp', 'a known name without a value')
  t.equal(
    redactQuery('/a?cgw_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1', known),
    '/a?[redacted]=[redacted]',
    'a long name may be a key'
  )
  t.equal(
    redactQuery('/a?%ZZ=1&np%77p=2', known),
    '/a?[redacted]=[redacted]&np%77p=2',
    'names are compared decoded'
  )
})
