import assert from 'node:assert'
import { createServer } from 'node:http'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import fc from 'fast-check'
import { test } from 'tap'
import { OPERATIONS } from '../../src/catalogue/operations.ts'
import { isArrayKind, isResource } from '../../src/catalogue/resource-spec.ts'
import type { FieldSpec, ResourceSpec } from '../../src/catalogue/resource-spec.ts'
import type { HubOperation } from '../../src/catalogue/types.ts'
import { requestFormats } from '../../src/schemas/formats.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'
import { HUBS, routeUrl } from '../helpers/hubs.ts'

/**
 * No answer carries a value its schema refuses. Hub answers of every
 * operation of the catalogue, with arbitrary strings, numbers and nulls in
 * every typed field of the item (nested records included), are served by a
 * real HTTP hub to the gateway; every 2xx the gateway answers must validate
 * against the OpenAPI document it serves (ajv, formats checked), and every
 * other answer must be 502 UPSTREAM_BAD_RESPONSE (a required field that
 * cannot be null broke its schema). Both decode paths are reached: the byte
 * transcoder reads most answers, the reference path those it gives up on.
 */
const SEED = 20261201
const RUNS = 40

const day = fc.tuple(
  fc.integer({ min: 1990, max: 2049 }),
  fc.integer({ min: 1, max: 12 }),
  fc.integer({ min: 1, max: 28 })
)
const time = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }),
  fc.integer({ min: 0, max: 59 }), fc.option(fc.integer({ min: 0, max: 9 })))
const two = (n: number) => String(n).padStart(2, '0')
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
/** A real day in each form the gateway reads, month names in any case. */
const forms = fc.tuple(day, fc.integer({ min: 0, max: 4 }), fc.boolean())
const hubDay = forms.map(([[y, m, d], form, mixed]) => {
  const month = MONTHS[m - 1]!
  const name = mixed ? month.charAt(0) + month.slice(1).toLowerCase() : month
  switch (form) {
    case 0: return `${y}-${two(m)}-${two(d)}`
    case 1: return `${y}${two(m)}${two(d)}`
    case 2: return `${two(d)}-${name}-${String(y).slice(2)}`
    case 3: return `${two(d)}-${name}-${y}`
    default: return `${y}-${two(m)}-${two(d)}`
  }
})
const hubMoment = fc.tuple(day, time).map(([[y, m, d], [h, mi, s, f]]) =>
  `${y}-${two(m)}-${two(d)} ${two(h)}:${two(mi)}:${two(s)}${f === null ? '' : `.${f}`}`)
/** Text that looks like a date and is none, or not quite in a form. */
const nearDate = fc.constantFrom('2024-02-30', '2023-02-29', '2024-13-01', '2024-00-10', '20241301',
  '2024-03-01 24:00:00', '2024-03-01 08:60:00', '2024-03-01 08:15:60.0', '2024-03-01 08:15:00.',
  '2024-03-01 08:15:00.x', '31-APR-23', '21-MAI-23', '21-MAY-2', '21/05/2023', '2024-3-1',
  '9999-99-99', '2024-03-01T08:15:00+07:00', '2024-03-0é', ' 2024-03-01', '2024-03x01 08:15:00')

const finite = fc.double({ noNaN: true, noDefaultInfinity: true })

/** What the hub sends in a field when it sends what the field says. */
function fitting (field: FieldSpec): fc.Arbitrary<unknown> {
  const { kind } = field
  if (field.format === 'uuid') return fc.uuid()
  switch (kind) {
    case 'string': return fc.string({ maxLength: 12 })
    case 'text': return fc.oneof(fc.string({ maxLength: 12 }), fc.integer())
    case 'integer': return fc.oneof(fc.integer(), fc.integer().map(String))
    case 'number': return fc.oneof(fc.integer(), finite)
    case 'flag': return fc.constantFrom(0, 1, '0', '1', true, false)
    case 'date': return hubDay
    case 'datetime':
    case 'date-with-time': return fc.oneof(hubMoment, hubDay)
    default: return fc.jsonValue({ maxDepth: 2 })
  }
}

/** Anything in a field: strings, numbers and nulls first. */
const anything = fc.oneof(
  fc.string({ maxLength: 16 }),
  fc.oneof(fc.integer(), fc.double(), fc.constantFrom(-0, 1e21, 2, 1.5, -1)),
  fc.constant(null),
  nearDate,
  fc.constantFrom('', 'null', '1', '0', 'yes', '1.5', '1e400', 'NaN'),
  fc.oneof(fc.boolean(), fc.constant({}), fc.constant([]))
)

/**
 * A record of `spec`: each scalar field fitting or anything at all, left
 * out now and then where the spec does not require it. A required field
 * that cannot be null is rarely broken (one of them broken fails the whole
 * answer, 502): enough answers stay 2xx to check the others.
 */
function record (spec: ResourceSpec): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(spec.required ?? [])
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const field of spec.fields) {
    const { kind } = field
    if (isResource(kind)) model[field.upstream] = record(kind)
    else if (isArrayKind(kind)) {
      const item: fc.Arbitrary<unknown> = kind.arrayOf === 'json'
        ? fc.jsonValue({ maxDepth: 2 })
        : record(kind.arrayOf)
      model[field.upstream] = fc.array(item, { maxLength: 2 })
    } else {
      const strict = required.has(field.upstream) && field.nullable !== true
      model[field.upstream] = fc.oneof(
        { weight: strict ? 40 : 1, arbitrary: fitting(field) },
        { weight: 1, arbitrary: anything }
      )
    }
  }
  return fc.record(model, { requiredKeys: [...required] })
}

/** The hub's whole answer, in the operation's shape, around generated records. */
function answer (op: HubOperation): fc.Arbitrary<unknown> {
  const { response } = op
  const items = fc.array(record(response.item), { minLength: 1, maxLength: 3 })
  switch (response.type) {
    case 'keyed-list': return items.map(list => ({ [response.key]: list }))
    case 'list': return items
    case 'records': return fc.oneof(items, record(response.item))
    case 'record': return record(response.item)
  }
}

const VALUES: Record<string, string> = {
  npwp: F.sp2.npwp,
  blNo: F.sp2.blNo,
  blDate: F.sp2.blDate,
  containerNo: F.sp2.containerNo,
  pibNo: F.declaration.pibNo,
  bookingRequestId: F.bookingRequestId,
  sp2Id: F.sp2.sp2Id
}
const BODIES: Record<string, unknown> = {
  DetilBooking: { serviceOrderId: 'SO-1', price: 10.5, offeredAt: '2024-03-01T08:15:00+07:00' },
  'DetilBooking/isBooked': { booked: true, note: 'property' }
}

type Json = Record<string, unknown>

test('every 2xx answer validates against the served document, whatever the hub sent', async (t) => {
  let body = Buffer.from('{}')
  const hub = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
    res.end(body)
  })
  await new Promise<void>(resolve => hub.listen(0, '127.0.0.1', resolve))
  t.teardown(() => hub.close())
  const url = `http://127.0.0.1:${(hub.address() as { port: number }).port}`
  const { app } = await build(t, {
    env: { UPSTREAM_HUB_URL: url, UPSTREAM_BASE_URL: url, RATE_LIMIT_MAX: '1000000' },
    logLevel: 'warn'
  })

  const doc = (await app.inject({ url: '/openapi.json' })).json<Json>()
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true })
  addFormats.default(ajv)
  requestFormats(ajv)
  // Each component under an id of its own, references rewritten to them (as
  // test/repo/openapi.test.ts).
  const BASE = 'https://gateway.example/schemas/'
  const rooted = (schema: unknown) =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${BASE}`)) as object
  const components = (doc.components as Json).schemas as Json
  for (const [name, schema] of Object.entries(components)) {
    ajv.addSchema(rooted(schema), `${BASE}${name}`)
  }

  for (const op of OPERATIONS as readonly HubOperation[]) {
    const path = op.route.url.replace(/:([A-Za-z0-9]+)/g, '{$1}')
    const method = op.method.toLowerCase()
    const operation = ((doc.paths as Json)[path] as Json)[method] as Json
    const ok = ((operation.responses as Json)['200'] as Json).content as Json
    const validate = ajv.compile(rooted((ok['application/json'] as Json).schema))
    const request = {
      method: op.method,
      url: routeUrl(HUBS.default, op.id, VALUES),
      ...(op.id in BODIES ? { payload: BODIES[op.id] as Json } : {})
    }
    let answered = 0
    await fc.assert(fc.asyncProperty(answer(op), fc.boolean(), async (value, pretty) => {
      body = Buffer.from(pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value))
      const res = await app.inject(request)
      if (res.statusCode === 200) {
        answered++
        const valid = validate(res.json())
        const errors = JSON.stringify(validate.errors?.slice(0, 3))
        assert.ok(valid, `${op.id}: ${errors}\nhub: ${body.toString().slice(0, 600)}\n${res.body}`)
      } else {
        assert.strictEqual(res.statusCode, 502, `${op.id}: ${res.body}`)
        assert.strictEqual(res.json<Json>().code, 'UPSTREAM_BAD_RESPONSE', res.body)
      }
    }), { seed: SEED, numRuns: RUNS })
    // Enough 2xx answers to check, whatever the weights above.
    t.ok(answered >= RUNS / 4, `${op.id}: ${answered} of ${RUNS} answers were 2xx and valid`)
  }
  const read = await app.metrics.registry.getSingleMetric('gateway_upstream_slow_path_total')?.get()
  const slow = (read?.values ?? []).reduce((sum, v) => sum + v.value, 0)
  t.ok(slow > 0 && slow < OPERATIONS.length * RUNS, `both paths read answers (${slow}: the slow)`)
})
