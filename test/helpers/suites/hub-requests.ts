import { test } from 'tap'
import { OPERATIONS } from '../../../src/catalogue/operations.ts'
import {
  SANDBOX_ACCESS_TOKEN,
  SANDBOX_API_KEY,
  SANDBOX_FIXTURES as F
} from '../../../src/sandbox/index.ts'
import type { BuildOptions } from '../helper.ts'
import { buildHub, keyHeaders, routeUrl, tokenHeader } from '../hubs.ts'
import type { Hub } from '../hubs.ts'

// What reaches the hub for each route: exactly the credential headers the
// hub reads for the operation, under its names, and the request id; nothing
// of the caller's.

const PAYLOADS: Record<string, object> = {
  'document_sp2/final': {},
  DetilBooking: { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' },
  'DetilBooking/isBooked': { booked: true }
}

const VALUES = {
  npwp: F.sp2.npwp,
  blNo: F.sp2.blNo,
  blDate: F.sp2.blDate,
  containerNo: F.sp2.containerNo,
  pibNo: F.declaration.pibNo,
  sp2Id: F.sp2.sp2Id,
  bookingRequestId: F.bookingRequestId
}

const CALLER_HEADERS = {
  authorization: 'Bearer caller-own-credential',
  authentication: 'Bearer caller-own-credential',
  cookie: 'session=caller-cookie',
  'x-forwarded-for': '203.0.113.9',
  'x-custom-header': 'caller-value',
  'customs-api-key': 'caller-supplied-key',
  'beacukai-api-key': 'caller-supplied-key',
  key: 'caller-supplied-key',
  'x-hub-key': 'caller-supplied-key',
  'x-request-id': 'trace-01'
}

const ALWAYS = [
  'host',
  'connection',
  'accept',
  'user-agent',
  'x-request-id',
  'content-type',
  'content-length'
]

/**
 * `keyHeader` names the key's header when the build options rename it
 * (the profile's defaults.apiKeyHeader with the sandbox's apiKeyHeader). `known`:
 * operations whose answer the gateway and the sandbox read differently, not
 * settled yet, with why: their status is a todo (the headers are checked).
 */
export function requestSuite (
  hub: Hub,
  options: BuildOptions & { keyHeader?: string; known?: Record<string, string> } = {}
): void {
  test(`each operation sends exactly its headers to the ${hub.name} hub: the key under its ` +
    'names, the token, the request id, nothing of the caller\'s', async (t) => {
    const { app, sandbox } = await buildHub(t, hub, options)
    for (const op of OPERATIONS) {
      sandbox.reset()
      const payload = PAYLOADS[op.id]
      const res = await app.inject({
        method: op.method,
        url: routeUrl(hub, op.id, {
          ...VALUES,
          blDate: op.id.startsWith('kontainer') ? '2024-01-01' : VALUES.blDate
        }),
        headers: CALLER_HEADERS,
        ...(payload === undefined ? {} : { payload })
      })
      const todo = options.known?.[op.id]
      t.equal(
        res.statusCode,
        200,
        `${op.id}: ${res.body.slice(0, 200)}`,
        todo === undefined ? {} : { todo }
      )
      t.equal(res.headers['x-request-id'], 'trace-01', `${op.id}: the caller's sane id is kept`)
      t.equal(sandbox.requests.length, 1, `${op.id}: one upstream call`)
      const sent = sandbox.requests[0]!.headers
      const keys =
        options.keyHeader === undefined
          ? keyHeaders(hub, op.id)
          : keyHeaders(hub, op.id).map(() => options.keyHeader ?? '')
      const token = tokenHeader(hub, op.id)
      for (const name of keys) {
        t.equal(sent[name], SANDBOX_API_KEY, `${op.id}: API key sent as ` +
        `${name}`)
      }
      if (token !== undefined) {
        t.equal(sent[token], SANDBOX_ACCESS_TOKEN, `${op.id}: token ` +
        `sent in ${token}`)
      }
      t.equal(sent['x-request-id'], 'trace-01', `${op.id}: request id sent upstream`)
      const allowed = new Set([...ALWAYS, ...keys, ...(token === undefined ? [] : [token])])
      t.same(
        Object.keys(sent).filter((h) => !allowed.has(h)),
        [],
        `${op.id}: no other header`
      )
      t.notOk(JSON.stringify(sent).includes('caller-'), `${op.id}: no caller value reaches the hub`)
    }
  })
}
