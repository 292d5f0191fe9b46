import { connect } from 'node:net'
import t from 'tap'
import { FAULTS, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_FIXTURES as F, magicValue } from '../../src/sandbox/index.ts'
import type { Sandbox, SandboxRequestLog } from '../../src/sandbox/index.ts'
import { AUTH, DEV, LOOKUP, V3, call, get, isRecord, post, qs, sandbox } from './helpers.ts'

// The magic values (the sandbox's table, docs/reference/sandbox.md), restated
// here so that a change on either side fails.
const STATUS_FAULTS: Array<{ name: string, code: string, status: number, body?: unknown, html?: true }> = [
  { name: '500', code: '500', status: 500, body: { message: 'Internal Server Error' } },
  { name: '503', code: '503', status: 503, html: true },
  { name: '502', code: '502', status: 502, html: true },
  { name: '504', code: '504', status: 504, body: { message: 'Gateway Timeout' } },
  { name: '404', code: '404', status: 404, body: { message: 'Data tidak ditemukan' } },
  { name: '401', code: '401', status: 401, body: { message: 'Token expired' } },
  { name: '403', code: '403', status: 403, body: { message: 'Forbidden' } },
  { name: '429', code: '429', status: 429, body: { message: 'Too Many Requests' } },
  { name: '400', code: '400', status: 400, body: { message: 'Parameter tidak valid' } },
  { name: '422', code: '422', status: 422, body: { message: 'Data tidak dapat diproses' } }
]

const CODES: Record<string, string> = {
  SLOW: '001', HANG: '002', MALFORMED: '900', HTML: '901', RESET: '902', EMPTY: '903', DRIFT: '904', NOKEY: '905', TRUNCATED: '906', SHAPE: '907', FAILNOTFOUND: '908', FAILREJECTED: '909', FAILNODATA: '910', FAILAUTH: '911', SNAKE: '912'
}

const npwpForm = (code: string): string => `990000000000${code}`
const uuidForm = (code: string): string => `00000000-0000-4000-8000-000000000${code}`
const dateForm = (code: string): string => `19${code.slice(0, 2)}011${code.slice(2)}`

/** One request per way of carrying a magic value, for a fault of this name and code. */
function carriers (sb: Sandbox, name: string, code: string): Array<[string, () => ReturnType<typeof get>]> {
  return [
    ['text form in a path segment', () => get(sb, `${LOOKUP}/kontainerbc261/SBX-${name}`)],
    ['text form, lower case, in the query', () => get(sb, `${LOOKUP}/BC20ByNoPib/${qs({ npwp: F.declaration.npwp, nopib: `sbx-${name.toLowerCase()}` })}`)],
    ['NPWP form', () => get(sb, `${LOOKUP}/noblbc20/${npwpForm(code)}`)],
    ['UUID form in a JSON body', () => post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: uuidForm(code) })],
    ['date form', () => get(sb, `${LOOKUP}/kontainerbc27/${qs({ tglBl: dateForm(code) })}`)],
    ['booking id in the query', () => post(sb, `${V3}/DetilBooking/isBooked/${qs({ idRequestBooking: `SBX-${name}` })}`, { isBooked: 1, booking_note: 'x' })]
  ]
}

t.test('status faults answer their status and body whatever carries the magic value', async (t) => {
  const sb = await sandbox(t)
  for (const fault of STATUS_FAULTS) {
    for (const [how, send] of carriers(sb, fault.name, fault.code)) {
      const res = await send()
      t.equal(res.status, fault.status, `${fault.name} via ${how}`)
      if (fault.html === true) {
        t.match(res.headers.get('content-type'), /^text\/html/)
        t.match(res.text, /^<!DOCTYPE html>/)
      } else {
        t.match(res.headers.get('content-type'), /^application\/json/)
        t.same(res.body, fault.body, `${fault.name} body via ${how}`)
      }
      if (fault.name === '429') t.equal(res.headers.get('retry-after'), '7')
    }
  }
})

t.test('a fault can ride on any query parameter or any string of a JSON body', async (t) => {
  const sb = await sandbox(t)
  const probe = await get(sb, `${LOOKUP}/noblbc20/${qs({ npwp: F.taxpayer.npwp, probe: 'SBX-503' })}`)
  t.equal(probe.status, 503)
  const nested = await post(sb, `${V3}/DetilBooking`, {
    idRequestBooking: F.bookingRequestId, idPlatform: F.platformId, idServiceOrder: 'SBX-422', hargaPenawaran: 1, waktuPenawaran: '2024-03-01 10:00:00', timestamp: '2024-03-01 10:00:00'
  }, { 'customs-api-key': SANDBOX_API_KEY })
  t.equal(nested.status, 422)
  const deep = await post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: F.sp2.sp2Id, extra: { list: ['x', 'SBX-403'] } })
  t.equal(deep.status, 403)
  const notMagic = await get(sb, `${LOOKUP}/kontainerbc261/SBX-NOPE`)
  t.equal(notMagic.status, 200, 'an unknown name is an ordinary value')
  t.same(notMagic.body, { 'data kontainer bc 261': [] })
  const almost = await get(sb, `${LOOKUP}/noblbc20/${npwpForm('123')}`)
  t.equal(almost.status, 200, 'an unknown code is an ordinary value')
})

t.test('MALFORMED: 200 application/json that does not parse, for every response shape', async (t) => {
  const sb = await sandbox(t)
  const replies = [
    await get(sb, `${LOOKUP}/noblbc20/${npwpForm('900')}`),
    await get(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: F.containers.kontainerbc261.noBl, probe: 'SBX-MALFORMED' })}`),
    await get(sb, `${DEV}/document_sp2/host-to-host/${qs({ npwp_cargo_owner: F.sp2.npwp, bl_no: F.sp2.blNo, bl_date: F.sp2.blDateCompact, x: 'SBX-MALFORMED' })}`),
    await post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: uuidForm('900') })
  ]
  for (const res of replies) {
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^application\/json/)
    t.ok(res.text.length > 0)
    t.throws(() => JSON.parse(res.text), `does not parse: ${res.text.slice(0, 40)}`)
  }
})

t.test('HTML: 200 with an HTML page', async (t) => {
  const sb = await sandbox(t)
  for (const [how, send] of carriers(sb, 'HTML', CODES.HTML ?? '')) {
    const res = await send()
    t.equal(res.status, 200, how)
    t.match(res.headers.get('content-type'), /^text\/html/)
    t.match(res.text, /<html>/)
  }
})

t.test('EMPTY, NOKEY, SHAPE and DRIFT break the shape in their own ways', async (t) => {
  const sb = await sandbox(t)
  const fixture = F.containers.kontainerbc261
  const normal = await get(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: fixture.noBl })}`)
  const normalItems = (normal.body as Record<string, unknown[]>)['data kontainer bc 261']
  t.equal(normalItems?.length, fixture.containerNos.length)
  const keyed = (fault: string) => get(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: fixture.noBl, probe: `SBX-${fault}` })}`)
  const array = (fault: string) => get(sb, `${DEV}/document_sp2/host-to-host/${qs({ npwp_cargo_owner: F.sp2.npwp, bl_no: F.sp2.blNo, bl_date: F.sp2.blDateCompact, probe: `SBX-${fault}` })}`)
  const object = (code: string) => post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: uuidForm(code) })

  t.same((await keyed('EMPTY')).body, { 'data kontainer bc 261': [] })
  t.same((await get(sb, `${LOOKUP}/noblbc20/${npwpForm('903')}`)).body, { 'Data BL BC 2.0': [] })
  t.same((await array('EMPTY')).body, [])
  t.same((await object('903')).body, {})

  const drift = await keyed('DRIFT')
  t.equal(drift.status, 200)
  t.same(Object.keys(drift.body as object), ['data kontainer'], 'only one key, not the expected one')
  t.same((drift.body as Record<string, unknown>)['data kontainer'], normalItems, 'the normal items under the drifted key')
  const blDrift = await get(sb, `${LOOKUP}/noblbc23/${qs({ npwp: F.taxpayer.npwp, p: 'SBX-DRIFT' })}`)
  t.same(Object.keys(blDrift.body as object), ['data bl'])
  t.equal((blDrift.body as Record<string, unknown[]>)['data bl']?.length, F.taxpayer.bc23.length)
  const arrayDrift = await array('DRIFT')
  t.ok(isRecord(arrayDrift.body), 'an array operation drifts into an object')
  t.equal(((arrayDrift.body as Record<string, unknown[]>).data)?.length, F.sp2.documentIds.length)

  for (const res of [await keyed('NOKEY'), await array('NOKEY'), await object('905'), await get(sb, `${LOOKUP}/noblbc16/${npwpForm('905')}`)]) {
    t.equal(res.status, 200)
    t.same(res.body, { status: 'ok' })
  }

  const shapeKeyed = await keyed('SHAPE')
  t.equal(shapeKeyed.status, 200)
  t.notOk(Array.isArray((shapeKeyed.body as Record<string, unknown>)['data kontainer bc 261']), 'the key holds no array')
  for (const res of [await array('SHAPE'), await object('907')]) {
    t.equal(res.status, 200)
    t.notOk(Array.isArray(res.body) || isRecord(res.body), 'neither an array nor an object')
    t.not(res.body, undefined, 'still valid JSON')
  }
})

t.test('SNAKE answers normally with each record\'s keys in snake_case, as a hub might spell its echoes', async (t) => {
  const sb = await sandbox(t)
  const offer = { idRequestBooking: F.bookingRequestId, idPlatform: 'PLTSBX01', idServiceOrder: 'SBX-SNAKE', hargaPenawaran: 10, waktuPenawaran: '2024-03-01 10:15:00', timestamp: '2024-03-01 10:15:02' }
  const offered = await post(sb, `${V3}/DetilBooking/`, offer)
  t.equal(offered.status, 200)
  t.same(offered.body, { message: 'Penawaran berhasil dikirim', id_request_booking: F.bookingRequestId, id_service_order: 'SBX-SNAKE' })
  const booked = await post(sb, `${V3}/DetilBooking/isBooked/${qs({ idRequestBooking: F.bookingRequestId })}`, { isBooked: 1, booking_note: 'SBX-SNAKE' })
  t.same(booked.body, { message: 'Booking berhasil diperbarui', id_request_booking: F.bookingRequestId, is_booked: 1 })
  // A list: its key and its items' keys (already snake_case) as they were.
  const fixture = F.containers.kontainerbc261
  const normal = await get(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: fixture.noBl })}`)
  t.same((await get(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: fixture.noBl, probe: 'SBX-SNAKE' })}`)).body, normal.body)
  // A failure stays the failure.
  t.equal((await post(sb, `${V3}/DetilBooking/isBooked/${qs({ idRequestBooking: F.unknownBookingRequestId })}`, { isBooked: 1, booking_note: 'SBX-SNAKE' })).status, 404)
})

t.test('SLOW answers normally after slowMs', async (t) => {
  // What the sandbox chose to wait before each answer, as it logs it: how long the answer took
  // besides is the machine's business.
  const seen: SandboxRequestLog[] = []
  const sb = await sandbox(t, { slowMs: 300, onRequest: entry => seen.push(entry) })
  const fixture = F.containers.kontainerbc261
  const quick = await get(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: fixture.noBl })}`)
  t.equal(seen.at(-1)?.delayMs, 0, 'without magic it is not delayed')
  let started = Date.now()
  const slow = await get(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: fixture.noBl, probe: 'SBX-SLOW' })}`)
  t.equal(seen.at(-1)?.delayMs, 300, 'delayed by slowMs')
  t.ok(Date.now() - started >= 290, `took ${Date.now() - started} ms`)
  t.equal(slow.status, 200)
  t.equal(slow.text, quick.text)
  started = Date.now()
  const npwp = await get(sb, `${LOOKUP}/noblbc20/${npwpForm('001')}`)
  t.equal(npwp.status, 200)
  t.ok(Date.now() - started >= 290)
})

t.test('HANG never answers, and close() does not wait for it', async (t) => {
  const sb = await sandbox(t)
  for (const [how, send] of [
    ['text', () => fetch(`${sb.url}${LOOKUP}/kontainerbc261/SBX-HANG`, { headers: AUTH, signal: AbortSignal.timeout(300) })],
    ['npwp', () => fetch(`${sb.url}${LOOKUP}/noblbc16/${npwpForm('002')}`, { headers: AUTH, signal: AbortSignal.timeout(300) })]
  ] as const) {
    await t.rejects(send(), { name: 'TimeoutError' }, how)
  }
  t.equal(sb.count('kontainerbc261'), 1, 'the hanging request was received')

  const other = await sandbox(t)
  const pending = fetch(`${other.url}${LOOKUP}/kontainerbc261/SBX-HANG`, { headers: AUTH }).catch((err: unknown) => err)
  while (other.count() === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  const started = Date.now()
  await other.close()
  // Waiting for the hanging request would take Node's request timeout (300 s), or forever.
  t.ok(Date.now() - started < 30_000, `closed without waiting for it (${Date.now() - started} ms)`)
  t.ok((await pending) instanceof Error, 'the client sees the connection go')
})

t.test('RESET destroys the connection without an answer', async (t) => {
  const sb = await sandbox(t)
  for (const [how, send] of carriers(sb, 'RESET', CODES.RESET ?? '')) {
    await t.rejects(send(), how)
  }
  t.equal(sb.count(), 6, 'every reset request was recorded')
  const after = await get(sb, `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`)
  t.equal(after.status, 200, 'the sandbox keeps serving')
})

/** Raw HTTP/1.1 exchange, to see bytes fetch would hide. */
function rawGet (sb: Sandbox, path: string): Promise<{ head: string, body: Buffer }> {
  const { hostname, port } = new URL(sb.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => {
      const all = Buffer.concat(chunks)
      const split = all.indexOf('\r\n\r\n')
      resolve({ head: all.subarray(0, split).toString(), body: all.subarray(split + 4) })
    })
    socket.write(`GET ${path} HTTP/1.1\r\nhost: ${hostname}\r\ncustoms-api-key: ${SANDBOX_API_KEY}\r\nauthorization: ${SANDBOX_ACCESS_TOKEN}\r\n\r\n`)
  })
}

t.test('TRUNCATED announces more bytes than it sends, then ends the connection', async (t) => {
  const sb = await sandbox(t)
  const { head, body } = await rawGet(sb, `${LOOKUP}/kontainerbc261/${qs({ noBl: F.containers.kontainerbc261.noBl, probe: 'SBX-TRUNCATED' })}`)
  t.match(head, /^HTTP\/1\.1 200/)
  const announced = Number(/content-length: (\d+)/i.exec(head)?.[1])
  t.ok(announced > 0)
  t.ok(body.length < announced, `${body.length} of ${announced} bytes`)
  t.ok(body.length > 0, 'some bytes did arrive')

  const res = await fetch(`${sb.url}${LOOKUP}/noblbc20/${npwpForm('906')}`, { headers: AUTH, signal: AbortSignal.timeout(5000) })
  t.equal(res.status, 200)
  await t.rejects(res.text(), 'reading the body fails')
})

t.test('magic applies after route matching: unknown addresses stay 404', async (t) => {
  const sb = await sandbox(t)
  const res = await call(sb, 'GET', `${LOOKUP}/nothing/SBX-500`, { headers: AUTH })
  t.equal(res.status, 404)
  t.same(res.body, { message: 'Not Found' })
})

t.test('magicValue builds the documented forms, and each form triggers its fault', async (t) => {
  t.equal(magicValue('500'), 'SBX-500')
  t.equal(magicValue('TRUNCATED', 'npwp'), '990000000000906')
  t.equal(magicValue('503', 'uuid'), '00000000-0000-4000-8000-000000000503')
  t.equal(magicValue('SLOW', 'date'), '19000111')
  t.equal(magicValue('503', 'date'), '19500113')
  t.equal(FAULTS.length, 25)
  t.equal(new Set(FAULTS.map((f) => f.code)).size, 25, 'codes are distinct')
  const named = FAULTS.filter(f => !/^\d+$/.test(f.name)).map(f => [f.name, f.code])
  t.same(Object.fromEntries(named), CODES, 'the named faults and their codes')
  const sb = await sandbox(t)
  t.equal((await get(sb, `${LOOKUP}/noblbc20/${magicValue('403', 'npwp')}`)).status, 403)
  t.equal((await get(sb, `${LOOKUP}/kontainerbc25/${magicValue('422', 'date')}`)).status, 422)
  t.equal((await get(sb, `${LOOKUP}/kontainerbc28/${magicValue('404')}`)).status, 404)
  t.equal((await get(sb, `${LOOKUP}/kontainerbc25/${qs({ tglBl: '20240101', probe: '1950-01-13' })}`)).status, 503, 'a date also in the form YYYY-MM-DD')
  t.equal((await get(sb, `${LOOKUP}/kontainerbc25/${qs({ tglBl: '20240101', probe: '1950-0113' })}`)).status, 200, 'not in a mix of the two')
})

t.test('a 200 answer reporting a failure, with no data, where a magic value asks for one', async (t) => {
  const sb = await sandbox(t)
  const cases = [
    ['FAILNOTFOUND', { status: 'Data tidak ditemukan' }],
    ['FAILREJECTED', { status: 'failed', message: 'Permintaan tidak dapat diproses' }],
    ['FAILNODATA', { message: 'Data tidak ditemukan' }],
    ['FAILAUTH', { status: 'failed', message: 'API key is not valid or is expired / revoked.' }]
  ] as const
  for (const [fault, body] of cases) {
    for (const path of [`${LOOKUP}/noblbc20/${magicValue(fault, 'npwp')}`, `${DEV}/document_sp2/host-to-host/${qs({ npwp_cargo_owner: F.sp2.npwp, bl_no: magicValue(fault), bl_date: F.sp2.blDateCompact })}`]) {
      const res = await get(sb, path)
      t.equal(res.status, 200, `${fault}: ${path}`)
      t.same(res.body, body, fault)
    }
  }
  t.equal(magicValue('FAILAUTH', 'date'), '19910111')
})
