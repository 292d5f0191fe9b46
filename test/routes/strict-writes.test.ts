import { test } from 'tap'
import { OfferBodySchema, BookedBodySchema } from '../../src/routes/bookings.ts'
import { FinalizationBodySchema } from '../../src/routes/sp2.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { FORMATS } from '../../src/schemas/formats.ts'
import { MAX_PROBLEMS } from '../../src/schemas/problems.ts'
import { build } from '../helpers/helper.ts'

/**
 * Writes take exactly what they say (docs/api.md#input-rules: bodies are never
 * type-coerced): a wrong JSON type is 400 VALIDATION_FAILED naming the field
 * and its rule, every problem is reported, and the hub (the sandbox, which
 * records every request it receives) is not called.
 */

interface Detail { field: string, rule: string }

const offer = { serviceOrderId: 'SO-1', price: 1250000.5, offeredAt: '2024-03-01T08:15:00+07:00' }
const booked = { booked: true, note: 'Truck B 1234 XYZ' }

const WRITES = [
  {
    name: 'offer',
    url: `/v1/bookings/${F.bookingRequestId}/offers`,
    schema: OfferBodySchema,
    valid: offer as Record<string, unknown>
  },
  {
    name: 'booked',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    schema: BookedBodySchema,
    valid: booked as Record<string, unknown>
  },
  {
    name: 'finalization',
    url: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`,
    schema: FinalizationBodySchema,
    valid: {} as Record<string, unknown>
  }
]

/** One value of every JSON type. */
const JSON_VALUES: Record<string, unknown> = {
  string: '15',
  number: 7,
  boolean: true,
  null: null,
  array: [7],
  object: { value: 7 }
}

/** Whether a JSON value is of a JSON Schema type (integers are numbers). */
function isOfType (value: unknown, type: string): boolean {
  if (type === 'null') return value === null
  if (type === 'array') return Array.isArray(value)
  if (type === 'object') return typeof value === 'object' && value !== null && !Array.isArray(value)
  if (type === 'integer') return Number.isInteger(value)
  return typeof value === 'string'
    ? type === 'string'
    : typeof value === 'number'
      ? type === 'number'
      : typeof value === 'boolean' && type === 'boolean'
}

function post (
  app: Awaited<ReturnType<typeof build>>['app'],
  url: string,
  payload: string,
  headers: Record<string, string> = {}
) {
  return app.inject({
    method: 'POST',
    url,
    payload,
    headers: { 'content-type': 'application/json', ...headers }
  })
}

test('every wrong JSON type in every body field of every POST is 400 naming the field, and the ' +
  'hub is not called', async (t) => {
  const { app, sandbox } = await build(t)
  let cases = 0
  for (const write of WRITES) {
    const properties = write.schema.properties as Record<string, { type: string }>
    for (const [field, schema] of Object.entries(properties)) {
      for (const [typeName, value] of Object.entries(JSON_VALUES)) {
        if (isOfType(value, schema.type)) continue
        const res = await post(app, write.url, JSON.stringify({ ...write.valid, [field]: value }))
        const body = res.json()
        t.equal(res.statusCode, 400, `${write.name}.${field} as ${typeName}: status`)
        t.equal(body.code, 'VALIDATION_FAILED', `${write.name}.${field} as ${typeName}: code`)
        t.same(
          body.details,
          [
            {
              field: `body.${field}`,
              rule: 'must be ' +
                `${schema.type === 'boolean' ? 'a boolean (true or false)' : `a ${schema.type}`}`
            }
          ],
          `${write.name}.${field} as ${typeName}: the field and its type, from the schema`
        )
        cases++
      }
    }
    // The body itself, of every type but an object.
    for (const [typeName, value] of Object.entries(JSON_VALUES)) {
      if (typeName === 'object') continue
      const res = await post(app, write.url, JSON.stringify(value))
      t.equal(res.statusCode, 400, `${write.name} body as ${typeName}`)
      t.same(
        res.json().details,
        [{ field: 'body', rule: 'must be a JSON object' }],
        `${write.name} body as ${typeName}: details`
      )
      cases++
    }
  }
  t.ok(cases >= 30, `${cases} wrong bodies sent`)
  t.equal(sandbox.count(), 0, 'the hub received nothing')
})

test('the reported bugs: price true/null/"15"/[7], serviceOrderId ["SO-1"], booked ' +
  '"false"/0', async (t) => {
  const { app, sandbox } = await build(t)
  for (const [url, body, field] of [
    [WRITES[0]!.url, { ...offer, price: true }, 'body.price'],
    [WRITES[0]!.url, { ...offer, price: null }, 'body.price'],
    [WRITES[0]!.url, { ...offer, price: '15' }, 'body.price'],
    [WRITES[0]!.url, { ...offer, price: [7] }, 'body.price'],
    [WRITES[0]!.url, { ...offer, serviceOrderId: ['SO-1'] }, 'body.serviceOrderId'],
    [WRITES[1]!.url, { booked: 'false' }, 'body.booked'],
    [WRITES[1]!.url, { booked: 0 }, 'body.booked']
  ] as const) {
    const res = await post(app, url, JSON.stringify(body))
    t.equal(res.statusCode, 400, JSON.stringify(body))
    t.match(res.json().details, [{ field }], `${JSON.stringify(body)} names ${field}`)
  }
  // The booked rule says what is accepted: true or false, not "must be true".
  const res = await post(app, WRITES[1]!.url, JSON.stringify({ booked: 'false' }))
  t.equal(res.json().message, 'body.booked must be a boolean (true or false)')
  t.equal(sandbox.count(), 0)
})

test('prices: at most two decimals, judged on the decimal text', async (t) => {
  const { app, sandbox } = await build(t)
  for (const price of [0.01, 0.29, 1.1, 10.5, 999999999.99, 123456789012.34, 1e12]) {
    const res = await post(app, WRITES[0]!.url, JSON.stringify({ ...offer, price }))
    t.equal(res.statusCode, 200, `${price} is accepted: ${res.body.slice(0, 200)}`)
  }
  t.equal(sandbox.count('DetilBooking'), 7)
  sandbox.reset()
  for (const price of [10.125, 0.001, 1e-7, -1, 1e13]) {
    const res = await post(app, WRITES[0]!.url, JSON.stringify({ ...offer, price }))
    t.equal(res.statusCode, 400, `${price} is refused`)
    t.match(
      res.json().details,
      [
        {
          field: 'body.price',
          rule: /^must (have at most 2 decimals|be at least 0|be at most 1000000000000)$/
        }
      ],
      `${price}: the rule`
    )
  }
  t.equal(sandbox.count(), 0)
})

test('every problem is reported, across path, query and body, in that order', async (t) => {
  const { app, sandbox } = await build(t)
  const res = await post(
    app,
    '/v1/bookings/A%20B/offers',
    JSON.stringify({ price: 'x', offeredAt: 'yesterday', idPlatform: 'EVIL' })
  )
  t.equal(res.statusCode, 400)
  const details = res.json().details as Detail[]
  t.equal(details[0]?.field, 'path.bookingRequestId', 'the path first')
  t.same(
    details
      .map((d) => d.field)
      .slice(1)
      .sort(),
    ['body.idPlatform', 'body.offeredAt', 'body.price', 'body.serviceOrderId'],
    'then one entry per body field and rule'
  )
  t.match(details, [
    { field: 'path.bookingRequestId', rule: `must be ${FORMATS['booking-request-id'].rule}` }
  ])
  t.ok(
    details.some((d) => d.field === 'body.serviceOrderId' && d.rule === 'is required'),
    'the missing field'
  )
  t.ok(
    details.some((d) => d.field === 'body.price' && d.rule === 'must be a number'),
    'the wrong type'
  )
  t.ok(
    details.some(
      (d) => d.field === 'body.offeredAt' && d.rule === `must be ${FORMATS['date-time'].rule}`
    ),
    'the format, worded by its definition'
  )
  t.ok(
    details.some((d) => d.field === 'body.idPlatform' && d.rule === 'is not a field of this body'),
    'the unknown field'
  )

  const lookup = await app.inject({
    url: '/v1/sp2/containers?npwp=123&blNo=../x&blDate=2024-02-30&containerNo=TCLU6470802&extra=1'
  })
  const fields = (lookup.json().details as Detail[]).map(d => d.field)
  t.same(
    [...fields].sort(),
    ['query.blDate', 'query.blNo', 'query.containerNo', 'query.extra', 'query.npwp'],
    'every query parameter at once'
  )
  t.equal(sandbox.count(), 0)
})

test('at most 20 problems are listed; the message says how many more', async (t) => {
  const { app } = await build(t)
  const body = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${i}`, i]))
  const res = await post(app, WRITES[1]!.url, JSON.stringify(body))
  const json = res.json()
  t.equal(json.details.length, MAX_PROBLEMS)
  t.match(json.message, /; and 11 more$/, '30 unknown fields and the missing `booked`: 31 problems')
})

test('a repeated query parameter is refused by name', async (t) => {
  const { app, sandbox } = await build(t)
  const res = await app.inject({
    url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}&npwp=${F.taxpayer.npwp}`
  })
  t.equal(res.statusCode, 400)
  t.same(res.json().details, [{ field: 'query.npwp', rule: 'is given twice; give it once' }])
  t.equal(res.json().message, 'query.npwp is given twice; give it once')
  const thrice = await app.inject({ url: '/v1/customs/bc28/containers?blNo=A&blNo=B&blNo=C' })
  t.same(thrice.json().details, [{ field: 'query.blNo', rule: 'is given 3 times; give it once' }])
  t.equal(sandbox.count(), 0)
})

test('query strings and path parameters keep their text conversion', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({
    url: `/v1/customs/bc20/declarations/${F.declaration.pibNo}?npwp=${F.declaration.npwp}`
  })
  t.equal(res.statusCode, 200, 'a numeric PIB number in the path is the string it is')
})

test('the finalization takes an empty body or {} and nothing else', async (t) => {
  const { app, sandbox } = await build(t)
  const url = WRITES[2]!.url
  const none = await app.inject({ method: 'POST', url })
  t.equal(none.statusCode, 200, `no body: ${none.body.slice(0, 200)}`)
  const emptyJson = await app.inject({
    method: 'POST',
    url,
    payload: '',
    headers: { 'content-type': 'application/json' }
  })
  t.equal(emptyJson.statusCode, 200, 'an empty body sent as JSON')
  const braces = await post(app, url, '{}')
  t.equal(braces.statusCode, 200, '{}')
  t.equal(sandbox.count('document_sp2/final'), 3)
  sandbox.reset()
  for (const payload of ['{"sp2Id":"x"}', 'null', '[]', '"x"', '0', 'false']) {
    const res = await post(app, url, payload)
    t.equal(res.statusCode, 400, payload)
    t.equal(res.json().code, 'VALIDATION_FAILED', payload)
  }
  t.equal(sandbox.count(), 0)
})

test('a body missing on a write that needs one says so', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ method: 'POST', url: WRITES[1]!.url })
  t.equal(res.statusCode, 400)
  t.same(res.json().details, [{ field: 'body', rule: 'is required: a JSON object' }])
})

test('a __proto__ or constructor.prototype key is refused by name; malformed JSON is called ' +
  'so', async (t) => {
  const { app, sandbox } = await build(t)
  const proto = await post(app, WRITES[1]!.url, '{"booked": true, "__proto__": {"polluted": true}}')
  t.equal(proto.statusCode, 400)
  t.match(proto.json().message, /^body must not hold a __proto__ key/)
  t.notMatch(proto.json().message, /not valid JSON/)
  const nested = await post(
    app,
    WRITES[1]!.url,
    '{"booked": true, "x": {"constructor": {"prototype": {"polluted": true}}}}'
  )
  t.match(nested.json().message, /^body must not hold a constructor\.prototype key/)
  const malformed = await post(app, WRITES[1]!.url, '{"booked": tru')
  t.same(malformed.json().details, [{ field: 'body', rule: 'must be valid JSON' }])
  t.notMatch(malformed.body, /tru/, 'the body is not echoed')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  t.equal(sandbox.count(), 0)
})

test('413 names the limit', async (t) => {
  const { app } = await build(t)
  const res = await post(
    app,
    WRITES[1]!.url,
    JSON.stringify({ booked: true, note: 'x'.repeat(70_000) })
  )
  t.equal(res.statusCode, 413)
  t.equal(res.json().message, 'The request body is larger than the limit of 64 KiB')
})
