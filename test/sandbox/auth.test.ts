import t from 'tap'
import { OPERATIONS, operationOf, type OperationId } from '../../src/catalogue/operations.ts'
import {
  SANDBOX_ACCESS_TOKEN,
  SANDBOX_API_KEY,
  SANDBOX_FIXTURES as F,
  SANDBOX_PLATFORM_ID
} from '../../src/sandbox/index.ts'
import { DEV, LOOKUP, V3, call, qs, sandbox } from './helpers.ts'

// Which headers each operation needs, as the gateway's catalogue says: the
// sandbox, a second reading of the hub, must agree with it.
interface Case {
  name: OperationId
  method: 'GET' | 'POST'
  path: string
  body?: unknown
  key: boolean
  token: boolean
}

/** The credential headers the catalogue lists for an operation. */
function needs (id: OperationId): { key: boolean, token: boolean } {
  const { headers } = operationOf(id)
  return { key: headers.includes('apiKey'), token: headers.includes('authorization') }
}

const c = F.containers
const cases: Case[] = [
  ...(['noblbc16', 'noblbc20', 'noblbc23'] as const).map((op): Case => ({
    name: op,
    method: 'GET',
    path: `${LOOKUP}/${op}/${qs({ npwp: F.taxpayer.npwp })}`,
    ...needs(op)
  })),
  ...(Object.keys(c) as Array<keyof typeof c>).map((op): Case => ({
    name: op,
    method: 'GET',
    path: `${LOOKUP}/${op}/${qs({ noBl: c[op].noBl, tglBl: c[op].tglBl })}`,
    ...needs(op)
  })),
  {
    name: 'BC20ByNoPib',
    method: 'GET',
    path: `${LOOKUP}/BC20ByNoPib/${qs({ npwp: F.declaration.npwp, nopib: F.declaration.pibNo })}`,
    ...needs('BC20ByNoPib')
  },
  {
    name: 'BC20ByNoBL',
    method: 'GET',
    path: `${LOOKUP}/BC20ByNoBL/${qs({ nobl: F.declaration.blNo })}`,
    ...needs('BC20ByNoBL')
  },
  {
    name: 'document_sp2_container/cargo_owner',
    method: 'GET',
    path: `${DEV}/document_sp2_container/cargo_owner/` + qs({
      bl_date: F.sp2.blDateCompact,
      container_no: F.sp2.containerNo,
      npwp_cargo_owner: F.sp2.npwp,
      bl_no: F.sp2.blNo
    }),
    ...needs('document_sp2_container/cargo_owner')
  },
  {
    name: 'document_sp2/host-to-host',
    method: 'GET',
    path: `${DEV}/document_sp2/host-to-host/` +
      `${qs({ npwp_cargo_owner: F.sp2.npwp, bl_no: F.sp2.blNo, bl_date: F.sp2.blDateCompact })}`,
    ...needs('document_sp2/host-to-host')
  },
  {
    name: 'document_sp2/final',
    method: 'POST',
    path: `${DEV}/document_sp2/final/`,
    body: { id_document_sp2: F.sp2.sp2Id },
    ...needs('document_sp2/final')
  },
  {
    name: 'DetilBooking',
    method: 'POST',
    path: `${V3}/DetilBooking/`,
    body: {
      idRequestBooking: F.bookingRequestId,
      idPlatform: SANDBOX_PLATFORM_ID,
      idServiceOrder: '7',
      hargaPenawaran: 900000,
      waktuPenawaran: '2024-03-01 10:00:00',
      timestamp: '2024-03-01 10:00:00'
    },
    ...needs('DetilBooking')
  },
  {
    name: 'DetilBooking/isBooked',
    method: 'POST',
    path: `${V3}/DetilBooking/isBooked/${qs({ idRequestBooking: F.bookingRequestId })}`,
    body: { isBooked: 1, booking_note: 'ok' },
    ...needs('DetilBooking/isBooked')
  }
]

t.test('every operation enforces exactly the header list of its catalogue entry', async (t) => {
  const sb = await sandbox(t)
  t.same(
    cases.map((c) => c.name).sort(),
    OPERATIONS.map((op) => op.id).sort(),
    'one case per operation of the catalogue'
  )
  for (const op of cases) {
    const send = (headers: Record<string, string>) =>
      call(sb, op.method, op.path, { headers, body: op.body })
    const both = await send({
      'customs-api-key': SANDBOX_API_KEY,
      authorization: SANDBOX_ACCESS_TOKEN
    })
    t.equal(both.status, 200, `${op.name} with both headers`)

    const noKey = await send({ authorization: SANDBOX_ACCESS_TOKEN })
    const wrongKey = await send({
      'customs-api-key': 'wrong-key-value',
      authorization: SANDBOX_ACCESS_TOKEN
    })
    for (const res of [noKey, wrongKey]) {
      if (op.key) {
        t.equal(res.status, 401, `${op.name} without a valid key`)
        t.same(res.body, { message: 'Invalid API key' })
      } else {
        t.equal(res.status, 200, `${op.name} does not need the key`)
      }
    }

    const noToken = await send({ 'customs-api-key': SANDBOX_API_KEY })
    const wrongToken = await send({
      'customs-api-key': SANDBOX_API_KEY,
      authorization: `Bearer ${SANDBOX_ACCESS_TOKEN}`
    })
    for (const res of [noToken, wrongToken]) {
      if (op.token) {
        t.equal(res.status, 401, `${op.name} without a valid token`)
        t.same(res.body, { message: 'Unauthorized' })
      } else {
        t.equal(res.status, 200, `${op.name} does not need the token`)
      }
    }
  }
})

t.test('the API key header name matches case-insensitively and is configurable', async (t) => {
  const sb = await sandbox(t)
  const path = `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`
  const mixed = await call(sb, 'GET', path, {
    headers: { 'Customs-API-Key': SANDBOX_API_KEY, Authorization: SANDBOX_ACCESS_TOKEN }
  })
  t.equal(mixed.status, 200)

  const custom = await sandbox(t, {
    apiKeyHeader: 'X-Hub-Key',
    apiKey: 'k-123',
    accessToken: 'Bearer t-456'
  })
  t.equal(
    (
      await call(custom, 'GET', path, {
        headers: { 'x-hub-key': 'k-123', authorization: 'Bearer t-456' }
      })
    ).status,
    200
  )
  t.equal(
    (
      await call(custom, 'GET', path, {
        headers: { 'customs-api-key': 'k-123', authorization: 'Bearer t-456' }
      })
    ).status,
    401
  )
  t.equal(
    (
      await call(custom, 'GET', path, {
        headers: { 'x-hub-key': SANDBOX_API_KEY, authorization: 'Bearer t-456' }
      })
    ).status,
    401
  )
  const verbatim = await call(custom, 'GET', path, {
    headers: { 'x-hub-key': 'k-123', authorization: 't-456' }
  })
  t.equal(verbatim.status, 401, 'the token is compared verbatim')
})

t.test('credentials are never echoed in a body', async (t) => {
  const sb = await sandbox(t)
  const key = 'secret-key-that-must-not-leak'
  const token = 'secret-token-that-must-not-leak'
  for (const headers of [
    { 'customs-api-key': key, authorization: token },
    { 'customs-api-key': SANDBOX_API_KEY, authorization: token }
  ]) {
    const res = await call(sb, 'GET', `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`, { headers })
    t.equal(res.status, 401)
    t.notMatch(res.text, /secret-/)
  }
  const ok = await call(sb, 'GET', `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`, {
    headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN }
  })
  t.notMatch(ok.text, SANDBOX_API_KEY)
  t.notMatch(ok.text, SANDBOX_ACCESS_TOKEN)
})

t.test(
  'an unknown address is a 404 even without credentials; magic values never skip the 401',
  async (t) => {
    const sb = await sandbox(t)
    const unknown = await call(sb, 'GET', `${LOOKUP}/noblbc99/${F.taxpayer.npwp}`)
    t.equal(unknown.status, 404)
    t.same(unknown.body, { message: 'Not Found' })
    const magic = await call(sb, 'GET', `${LOOKUP}/kontainerbc261/SBX-500`, {
      headers: { authorization: SANDBOX_ACCESS_TOKEN }
    })
    t.equal(magic.status, 401)
    t.same(magic.body, { message: 'Invalid API key' })
    const hang = await call(sb, 'GET', `${LOOKUP}/kontainerbc261/SBX-HANG`, {
      headers: { 'customs-api-key': SANDBOX_API_KEY }
    })
    t.equal(hang.status, 401, 'not even a hang')
  }
)
