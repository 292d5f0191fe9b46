import assert from 'node:assert'
import { readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { test } from 'tap'
import { prepareBodies } from './fixtures/hub-bodies.ts'
import { loadConfig } from '../src/config/load.ts'
import { sandboxEnv } from '../src/sandbox/index.ts'
import { readHubDate } from '../src/domain/dates.ts'
import { compileTranscoder } from '../src/mapping/transcode/index.ts'
import { compileNormalizer } from '../src/mapping/normalize.ts'
import { camelCase, isArrayKind, isResource, type FieldSpec, type ResourceSpec } from '../src/catalogue/resource-spec.ts'
import { BlEntry, BookedAnswer, OfferAnswer, Sp2Container, Sp2Document } from '../src/catalogue/resources.ts'
import { extract } from '../src/upstream/reference-path.ts'
import { resolveOperations, type ResolvedOperation } from '../src/upstream/resolve-operations.ts'
import { oneTurnEach } from '../src/upstream/one-turn-each.ts'
import { SANDBOX_FIXTURES } from '../src/sandbox/index.ts'
import { build } from './helper.ts'
import { identityOnly } from './fixtures/loose-specs.ts'

/**
 * The byte transcoder (fast path) against the reference path (JSON.parse,
 * extract, the compiled normalizer, JSON.stringify). Whatever the transcoder
 * answers must be, on the wire, what the reference path answers; where the
 * reference path fails the transcoder must give up; and on answers of the
 * documented shape it must not give up (or it would not be the fast path).
 */
const SEED = 20261122
const RUNS = 150
const OFFSET = '+07:00'
const quiet = () => {}

const operations = [...resolveOperations(loadConfig(sandboxEnv('http://127.0.0.1:1'))).values()]

type Outcome =
  | { ok: true, json: string, count: number | undefined, drift: number }
  | { ok: false, error: unknown }

/** The reference path, as the decoder takes it: the wire's answer and its drift, or the error. */
function reference (op: ResolvedOperation, text: string): Outcome {
  op.drift.bits = 0
  try {
    const data = extract(op, JSON.parse(text), quiet)
    const drift = op.drift.bits
    const count = Array.isArray(data) ? data.length : undefined
    return { ok: true, json: JSON.stringify(data), count, drift }
  } catch (error) {
    return { ok: false, error }
  }
}

/** Compares the fast path with the reference path on one body; returns whether the fast path took it. */
function agree (op: ResolvedOperation, text: string): boolean {
  const fast = op.transcode!(Buffer.from(text))
  if (fast === undefined) return false
  const ref = reference(op, text)
  if (!ref.ok) assert.fail(`${op.id}: the transcoder answered where the reference path fails (${String(ref.error)}): ${text.slice(0, 300)}`)
  const ours = fast.json.toString('utf8')
  // Valid JSON, and the same values as the reference answer (key order aside).
  assert.deepStrictEqual(JSON.parse(ours), JSON.parse(ref.json), `${op.id}: ${text.slice(0, 300)}`)
  assert.strictEqual(fast.count, ref.count, `${op.id}: count`)
  // The same tolerances counted (a refused value as invalid-value), whichever path read it.
  assert.strictEqual(fast.drift, ref.drift, `${op.id}: drift bits: ${text.slice(0, 300)}`)
  return true
}

// --- generators -------------------------------------------------------------------

const datePart = fc.tuple(fc.integer({ min: 1990, max: 2040 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
  .map(([y, m, d]) => `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`)
const timePart = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 }))
  .map(([h, m, s]) => [h, m, s].map(n => String(n).padStart(2, '0')).join(':'))
const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC']
/** The hub's four date formats (docs/hub.md#dates-and-values), an Oracle hub's DD-MON-YY[YY]. */
const hubDate = fc.oneof(
  datePart,
  datePart.map(d => d.replaceAll('-', '')),
  fc.tuple(datePart, fc.boolean(), fc.boolean()).map(([d, long, lower]) => {
    const month = MONTHS[Number(d.slice(5, 7)) - 1]!
    const year = long ? d.slice(0, 4) : d.slice(2, 4)
    return `${d.slice(8)}-${lower ? month.toLowerCase() : month}-${year}`
  }),
  fc.tuple(datePart, timePart).map(([d, t]) => `${d} ${t}`),
  fc.tuple(datePart, timePart, fc.integer({ min: 0, max: 9 })).map(([d, t, f]) => `${d} ${t}.${f}`)
)
/** Strings as the hub sends them, including what JSON must escape and non-ASCII text. */
const hubString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('PT Logistik Truk Indonesia', 'Jl. Raya Cilincing — Tanjung Priok', 'Ümit Ltd', '"quoted" \\ back\\slash', 'line\nbreak\ttab', '東京', '😀 emoji', ''),
  fc.string({ unit: 'binary', maxLength: 8 })
)

/**
 * Content the specs do not describe, as a hub writes it: snake_case keys
 * (one underscore at most, so no two camelCase alike), any JSON values.
 */
const hubKey = fc.stringMatching(/^[a-z]{1,6}(_[a-z]{1,6})?$/)
const hubJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>(tie => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(hubKey, tie('value'), { maxKeys: 4 }))
})).value

/** Values that fit the field's kind in the ways the hub writes them. */
function wellFormedValue (field: FieldSpec): fc.Arbitrary<unknown> {
  const { kind } = field
  const orNull = (a: fc.Arbitrary<unknown>) => field.nullable === true ? fc.oneof({ weight: 4, arbitrary: a }, { weight: 1, arbitrary: fc.constant(null) }) : a
  if (isResource(kind)) return orNull(wellFormedRecord(kind))
  if (isArrayKind(kind)) return fc.array<unknown>(kind.arrayOf === 'json' ? hubJson : wellFormedRecord(kind.arrayOf), { maxLength: 3 })
  switch (kind) {
    case 'string':
      if (field.format === 'uuid') return orNull(fc.uuid())
      return orNull(field.emptyAsNull === true ? fc.oneof(hubString, fc.constant('')) : hubString)
    case 'text': return orNull(fc.oneof(hubString, fc.integer(), fc.constantFrom(20, 40)))
    case 'integer': return orNull(fc.oneof(fc.integer(), fc.integer().map(String)))
    case 'number': return orNull(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(3855830.15, 0.5, 12.25)))
    case 'flag': return orNull(fc.constantFrom(0, 1, '0', '1', true, false))
    case 'date':
    case 'datetime':
    case 'date-with-time': return orNull(hubDate)
    case 'json': return hubJson
  }
}

function wellFormedRecord (spec: ResourceSpec): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const field of spec.fields) model[field.upstream] = wellFormedValue(field)
  return fc.record(model, { requiredKeys: spec.required ?? [] })
}

/** Anything at all in a field: wrong types, odd numbers, empty strings, nulls. */
const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom('', ' ', '1', '0', '2', 'yes', 1e21, -0, 0.1, 2, -1, 1.5, '1.5', 'NaN', '1e400', '2024-13-45', '20240301', '2024-03-01T08:00:00'),
  fc.constantFrom('2024-02-30', '2023-02-29', '20241301', '2024-03-01 24:00:00',
    '2024-03-01 08:15:60.0', '2024-03-01 08:15:00.', '31-APR-23', '21-MAI-23', '21-MAY-2',
    '2024-03x01 08:15:00', '0000-01-01'),
  hubDate,
  hubString
)

function hostileRecord (spec: ResourceSpec, depth = 0): fc.Arbitrary<unknown> {
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const field of spec.fields) {
    const inner = isResource(field.kind) ? field.kind : isArrayKind(field.kind) && field.kind.arrayOf !== 'json' ? field.kind.arrayOf : undefined
    const nested = inner !== undefined && depth < 3 ? hostileRecord(inner, depth + 1) : undefined
    const options: Array<fc.Arbitrary<unknown>> = [wellFormedValue(field), hostileValue]
    if (nested !== undefined) options.push(nested, fc.array(nested, { maxLength: 2 }))
    model[field.upstream] = fc.oneof(...options)
  }
  // Unknown keys, some camelCasing onto a field's name or onto each other, some another spelling of a field's hub name.
  const spellings = spec.fields.flatMap(field => {
    const camel = camelCase(field.upstream)
    return [camel, camel.charAt(0).toUpperCase() + camel.slice(1), camel.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase(), camel.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase(), field.name]
  }).filter(key => !spec.fields.some(field => field.upstream === key))
  const extra = fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('extra_field', 'extraField', 'EXTRA_FIELD', '__proto__', 'constructor', ...spellings)), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(fc.record(model, { requiredKeys: [] }), extra).map(([known, more]) => ({ ...more, ...known })) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) }
  )
}

/** The whole answer in the operation's shape, around generated records. */
function answer (op: ResolvedOperation, item: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const list = fc.array(item, { maxLength: 4 })
  switch (op.response.type) {
    case 'keyed-list': return fc.tuple(list, fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }))
      .map(([items, others]) => ({ ...others, [op.documentedKey as string]: items }))
    case 'list': return list
    case 'records': return fc.oneof(list, item)
    case 'record': return item
  }
}

const layout = fc.constantFrom<(v: unknown) => string>(v => JSON.stringify(v), v => JSON.stringify(v, null, 2), v => ` \r\n${JSON.stringify(v, null, '\t')}\n`)

// --- properties ---------------------------------------------------------------------

test('answers of the documented shape take the fast path and equal the reference path', async (t) => {
  for (const op of operations) {
    fc.assert(fc.property(answer(op, wellFormedRecord(op.response.item)), layout, (value, write) => {
      const text = write(value)
      if (!agree(op, text)) assert.fail(`${op.id}: the transcoder gave up on a well-formed answer: ${text.slice(0, 300)}`)
    }), { seed: SEED, numRuns: RUNS })
    t.pass(`${op.id} (${op.response.type} of ${op.response.item.id})`)
  }
})

test('on any answer the fast path either gives up or equals the reference path', async (t) => {
  for (const op of operations) {
    let fast = 0
    fc.assert(fc.property(answer(op, hostileRecord(op.response.item)), layout, (value, write) => {
      if (agree(op, write(value))) fast++
    }), { seed: SEED, numRuns: RUNS * 2 })
    t.pass(`${op.id}: ${fast} of ${RUNS * 2} answers took the fast path`)
  }
})

test('text that is not JSON, or not quite, is left to the reference path', async (t) => {
  // Only the identity required: each body is given up on for what it shows, not for a field it leaves out.
  const list = compileTranscoder({ type: 'list', item: identityOnly(Sp2Container) }, { offset: OFFSET })
  const keyed = compileTranscoder({ type: 'keyed-list', item: BlEntry, key: 'Data BL BC 2.0' }, { offset: OFFSET })
  const cases: Array<[string, typeof list, string | Buffer]> = [
    ['empty body', list, ''],
    ['truncated', list, '[{"container_no":"A"'],
    ['trailing garbage', list, '[{"container_no":"A"}] x'],
    ['two documents', list, '[][]'],
    ['a raw control character in a string', list, '[{"container_no":"A\u0001"}]'],
    ['a raw newline in a string', list, '[{"container_no":"A\nB"}]'],
    ['a bad escape', list, '[{"container_no":"A\\x"}]'],
    ['a short unicode escape', list, '[{"container_no":"A\\u12"}]'],
    ['invalid UTF-8', list, Buffer.from([0x5b, 0x7b, 0x22, 0x63, 0x6f, 0x6e, 0x74, 0x61, 0x69, 0x6e, 0x65, 0x72, 0x5f, 0x6e, 0x6f, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x5d])],
    ['a byte order mark', list, '\ufeff[]'],
    ['a duplicate known key', list, '[{"container_no":"A","container_no":"B"}]'],
    ['a duplicate unknown key', list, '[{"container_no":"A","x_y":1,"x_y":2}]'],
    ['unknown keys camelCasing alike', list, '[{"container_no":"A","x_y":1,"xY":2}]'],
    ['an unknown key camelCasing onto a field', list, '[{"container_no":"A","containerNo":"B"}]'],
    ['an escaped key', list, '[{"container\\u005fno":"A"}]'],
    ['a missing identity field', list, '[{"gate_pass":"G"}]'],
    ['a number where an object goes', list, '[1]'],
    ['an object where the list goes', list, '{"container_no":"A"}'],
    ['a leading zero', list, '[{"container_no":"A","id_sp2_container":01}]'],
    ['a bare minus', list, '[{"container_no":"A","id_sp2_container":-}]'],
    ['a fraction without digits', list, '[{"container_no":"A","id_sp2_container":1.}]'],
    ['a misspelt literal', list, '[{"container_no":"A","gate_pass":nul}]'],
    ['a missing comma', list, '[{"container_no":"A" "gate_pass":null}]'],
    ['key drift (the reference path finds and logs it)', keyed, '{"Data BL BC 20":[{"bl_no":"A"}]}'],
    ['the list key twice', keyed, '{"Data BL BC 2.0":[],"Data BL BC 2.0":[{"bl_no":"A"}]}'],
    ['the list key holding an object', keyed, '{"Data BL BC 2.0":{"bl_no":"A"}}']
  ]
  for (const [name, transcode, body] of cases) {
    t.equal(transcode(Buffer.isBuffer(body) ? body : Buffer.from(body)), undefined, name)
  }
})

test('a field in another spelling is left to the reference path, which renames it: the answer never holds both names', async (t) => {
  const booked = compileTranscoder({ type: 'record', item: BookedAnswer }, { offset: OFFSET })
  const offer = compileTranscoder({ type: 'record', item: OfferAnswer }, { offset: OFFSET })
  for (const body of ['{"message":"ok","id_request_booking":"B","isBooked":1}', '{"message":"ok","IdRequestBooking":"B"}', '{"idRequestBooking":"B","is_booked":1}', '{"isBooked":1,"booked":true}']) {
    t.equal(booked(Buffer.from(body)), undefined, `${body}: the reference path decides`)
  }
  t.equal(offer(Buffer.from('{"message":"ok","idRequestBooking":"B","id_service_order":"SO-1"}')), undefined)
  t.same(JSON.parse(booked(Buffer.from('{"message":"ok","idRequestBooking":"B","isBooked":1,"other_key":2}'))?.json.toString() ?? 'null'),
    { upstreamMessage: 'ok', bookingRequestId: 'B', booked: true, hubExtra: { otherKey: 2 } }, 'the hub\'s own spelling takes the fast path')
  const op = operations.find(o => o.id === 'DetilBooking/isBooked')!
  const ref = reference(op, '{"message":"ok","id_request_booking":"B","is_booked":1}')
  t.same(ref.ok ? JSON.parse(ref.json) : ref.error, { upstreamMessage: 'ok', bookingRequestId: 'B', booked: true }, 'the reference path renames')
})

/** An SP2 document's id: a UUID, as its schema says. */
const U = '3f2504e0-4f89-11d3-9a0c-0305e82c3301'

test('values pass through or convert exactly as the normalizer converts them', async (t) => {
  const doc = compileTranscoder({ type: 'record', item: identityOnly(Sp2Document) }, { offset: OFFSET })
  const out = (body: string) =>
    JSON.parse(doc(Buffer.from(body))?.json.toString() ?? 'null') as Record<string, unknown> | null
  const base = `"id_document_sp2":"${U}"`
  t.same(out(`{${base},"terminal":"Jl. \\"A\\" \\\\ \\u00e9 é 東京"}`),
    { sp2Id: U, terminal: 'Jl. "A" \\ é é 東京' }, 'escapes and UTF-8 kept')
  const dates = '"request_date":"2024-03-01 08:15:00.0","paid_thrud_date":"20240305",' +
    '"proforma_date":"2024-03-06 10:00:00"'
  t.same(out(`{${base},${dates}}`), {
    sp2Id: U,
    requestedAt: '2024-03-01T08:15:00.0+07:00',
    paidThroughDate: '2024-03-05',
    proformaDate: '2024-03-06'
  }, 'the four date formats')
  t.same(out(`{${base},"is_finished":"0","price":"12.50","party":"3","id_ff_ppjk":12}`),
    { sp2Id: U, finished: false, price: 12.5, containerCount: 3, forwarderId: '12' },
    'numbers and flags sent as strings, a number as text')
  t.same(out(`{${base},"price":1.50e2,"party":1e2,"id_platform":1.0}`),
    { sp2Id: U, price: 150, containerCount: 100, platformId: '1' }, 'numbers in other notations')
  t.same(out(`{${base},"container":[{"container_no":"C","gate_pass":""}],"url":null}`),
    { sp2Id: U, containers: [{ containerNo: 'C', gatePass: null }], documentUrl: null },
    'empty gate pass and null')
  t.same(out(`{${base},"Extra Field":{"inner_key":[{"deep_key":1e400}]}}`),
    { sp2Id: U, hubExtra: { extraField: { innerKey: [{ deepKey: null }] } } },
    'unknown content camelCased, an infinite number as null like JSON.stringify')
  const wide = Array.from({ length: 20 }, (_, i) => `"key_${i}":${i}`).join(',')
  const keys = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key${i}`, i]))
  t.same(out(`{${base},"Extra Field":{${wide},"k\\u0065y_x":"e"}}`),
    { sp2Id: U, hubExtra: { extraField: { ...keys, keyX: 'e' } } },
    'unknown content with many keys and an escaped one, camelCased')
  t.equal(out(`{${base},"Extra Field":{"a_b":1,"aB":2}}`), null, 'unknown content with two keys camelCased alike: the reference path decides')
  t.equal(out(`{${base},"Extra Field":{${wide},"key_3":9}}`), null, 'the same, past 16 keys')
  t.equal(out(`{${base},"party":1.5}`), null, 'a fraction for an integer: the reference path')
  t.equal(out(`{${base},"is_finished":2}`), null, 'a flag of 2: the reference path leaves it out')
  t.equal(out(`{${base},"terminal":{}}`), null, 'an object for a string: the reference path')
  t.same(out(`{${base},"url":{},"id_ff_ppjk":"2024-02-30","payment_url":true}`),
    { sp2Id: U, documentUrl: null, forwarderId: '2024-02-30', paymentUrl: null },
    'a field that may be null, refused: null, on the fast path too')
  t.equal(out('{"id_document_sp2":"not-a-uuid"}'), null, 'an id, no UUID: the reference path')
  t.equal(out(`{${base},"paid_thrud_date":"2024-02-30"}`), null, 'no real day: the reference path')
})

test('numbers and dates come out in exactly the text the normalizer writes, whichever path they take', async (t) => {
  const doc = compileTranscoder({ type: 'record', item: identityOnly(Sp2Document) }, { offset: OFFSET })
  // The text of one member of our answer, as written (not parsed): a number passed through must already be its shortest form.
  const member = (body: string, name: string): string | undefined => {
    const json = doc(Buffer.from(`{"id_document_sp2":"${U}",${body}}`))?.json.toString()
    return json === undefined ? undefined : new RegExp(`"${name}":("[^"]*"|[^,}]*)`).exec(json)?.[1]
  }
  const numbers = ['3855830.15', '0.5', '12.25', '1.50', '0.05', '0.10', '100', '-0.5', '-0', '0', '0.0', '-12.340', '1e2', '1.5E-3',
    '123456789012345', '1234567890123456', '12345678901234.5', '123456789012345.6', '0.1', '0.000001', '99.9990', '5.0']
  for (const text of numbers) {
    const expected = String(Number(text))
    t.equal(member(`"price":${text}`, 'price'), expected, `price ${text}`)
    t.equal(member(`"price":"${text}"`, 'price'), expected, `price "${text}"`)
    t.equal(member(`"id_ff_ppjk":${text}`, 'forwarderId'), JSON.stringify(expected), `a number as text: ${text}`)
  }
  for (const text of ['3', '020', '-7', '0', '-0', '1.0', '123456789012345']) {
    t.equal(member(`"party":"${text}"`, 'containerCount'), String(Number(text)), `integer "${text}"`)
  }
  t.equal(member('"party":"1.5"', 'containerCount'), undefined, 'a fraction in a string where an integer goes: the reference path reports it')
  t.equal(member('"party":"1x"', 'containerCount'), undefined, 'not a number: the reference path reports it')
  fc.assert(fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }), fc.integer({ min: 0, max: 20 }), (n, digits) => {
    for (const text of [String(n), n.toFixed(digits), n.toPrecision(digits + 1)]) {
      if (text.includes('e') && !/^-?\d(\.\d+)?e[+-]\d+$/.test(text)) continue
      assert.strictEqual(member(`"price":${text}`, 'price'), String(Number(text)), text)
    }
  }), { seed: SEED, numRuns: 300 })
  // Expected: the rules' reading (src/domain/dates.ts) of the decoded string; none where refused.
  const dates: Array<[string, string]> = [
    ['proforma_date', '2024-03-06'],
    ['proforma_date', '2024-03-06 10:00:00'],
    ['proforma_date', '20240306'],
    ['proforma_date', '2024-03-0é'],
    ['request_date', '2024-03-01 08:15:00'],
    ['request_date', '2024-03-01 08:15:00.5'],
    ['request_date', '2024-03-01'],
    ['request_date', '2024-03-01T08:15:00'],
    ['request_date', '2024-03-01 08:15:0é'],
    ['request_date', '2024-03-01 08:15\\u003a00'],
    ['request_date', '2024/03/01 08:15:00'],
    ['request_date', '2024-03X01 08:15:00'],
    ['request_date', '2024-03-01 08:15:00.25'],
    ['request_date', '2024-03-01 08:15:00,5'],
    ['proforma_date', '2024-03-01 08:15:00.5'],
    ['proforma_date', '21-MAY-23'],
    ['proforma_date', '21-May-2023'],
    ['proforma_date', '2024-02-30'],
    ['proforma_date', '2024-02-29'],
    ['request_date', '21-MAY-23'],
    ['request_date', '20240301'],
    ['request_date', '2024-03-01 24:00:00'],
    ['request_date', '2024-03-01 08:15:00.'],
    ['request_date', '2023-02-29 08:15:00']
  ]
  for (const [key, text] of dates) {
    const read = readHubDate(JSON.parse(`"${text}"`) as string)
    const moment = `${read?.day}T${read?.time ?? '00:00:00'}${OFFSET}`
    const expected = read && JSON.stringify(key === 'proforma_date' ? read.day : moment)
    t.equal(member(`"${key}":"${text}"`, key === 'proforma_date' ? 'proformaDate' : 'requestedAt'), expected, `${key} ${text}`)
  }
})

test('a date the hub sends with a time becomes its date and its date-time, in exactly the normalizer\'s text', async (t) => {
  const bl = compileTranscoder({ type: 'record', item: BlEntry }, { offset: OFFSET })
  const nullable: ResourceSpec = {
    id: 'Stamped',
    title: 'Stamped',
    source: 'test',
    fields: [{ upstream: 'tgl', name: 'day', dateTimeName: 'dayTime', kind: 'date-with-time', nullable: true, emptyAsNull: true, description: 'a nullable stamped date' }]
  }
  const stamped = compileTranscoder({ type: 'record', item: nullable }, { offset: OFFSET })
  const texts = ['2023-01-01 03:20:00.0', '2024-04-23 00:00:00.0', '2024-04-23 23:59:59', '2024-04-23 08:15:00.25', '2024-04-23', '20240423',
    '2024-04-23T08:15:00', '2024-04-23 08:15:00.', '2024-04-23 08:15:0é', '2024-0X-23 08:15:00.0', '2024-04-23 08\u003a15:00.0', 'soon', '']
  for (const text of [...texts, '21-MAY-23', '2024-02-30 08:00:00.0', '2024-04-23 08:15:61.0']) {
    const read = readHubDate(JSON.parse(`"${text}"`) as string)
    const json = bl(Buffer.from(`{"bl_no":"B","bl_date":"${text}"}`))?.json.toString()
    // Unread, the BL's date (its identity) fails the answer: the reference path reports it.
    const moment = `${read?.day}T${read?.time ?? '00:00:00'}${OFFSET}`
    const expected = read && `{"blNo":"B","blDate":"${read.day}","blDateTime":"${moment}"}`
    t.equal(json, expected, `bl_date ${text}`)
  }
  t.equal(bl(Buffer.from('{"bl_no":"B","bl_date":"2023-01-01 03:20:00.0"}'))?.json.toString(),
    '{"blNo":"B","blDate":"2023-01-01","blDateTime":"2023-01-01T03:20:00.0+07:00"}', 'the day in the hub\'s calendar, whatever the hour')
  t.equal(bl(Buffer.from('{"bl_no":"B","bl_date":null}')), undefined, 'null where the field is not nullable: the reference path reports it')
  t.equal(stamped(Buffer.from('{"tgl":null}'))?.json.toString(), '{"day":null,"dayTime":null}', 'null: both null')
  t.equal(stamped(Buffer.from('{"tgl":""}'))?.json.toString(), '{"day":null,"dayTime":null}', 'empty as null: both null')
  t.equal(bl(Buffer.from('{"bl_no":"B","bl_date":"2024-04-23 00:00:00.0","bl_date_time":"x"}')), undefined, 'an unknown key camelCasing onto the second name: the reference path decides')
  const op = operations.find(o => o.id === 'noblbc16')!
  t.ok(agree(op, '{"Data BL BC 1.6":[{"bl_no":"B","bl_date":"2024-04-23 00:00:00.0","bl_date_time":"x"}]}') === false, 'given up on, and the reference path answers')
})

test('keys shorter than a word are recognised too', async (t) => {
  const spec: ResourceSpec = {
    id: 'Tiny',
    title: 'Tiny',
    source: 'test',
    fields: [
      { upstream: 'a', name: 'alpha', kind: 'string', description: 'one byte' },
      { upstream: 'bc', name: 'beta', kind: 'integer', description: 'two bytes' },
      { upstream: 'def', name: 'gamma', kind: 'string', description: 'three bytes' }
    ],
    required: ['a']
  }
  const tiny = compileTranscoder({ type: 'list', item: spec }, { offset: OFFSET })
  const out = (body: string) => tiny(Buffer.from(body))?.json.toString()
  t.equal(out('[{"a":"x","bc":2,"def":"y"},{"a":"z","bc":3,"def":"w"}]'), '[{"alpha":"x","beta":2,"gamma":"y"},{"alpha":"z","beta":3,"gamma":"w"}]')
  t.equal(out('[{"a" : "x", "def":"y"}]'), '[{"alpha":"x","gamma":"y"}]', 'with white space around the colon')
  t.equal(out('[{"b":"x"}]'), undefined, 'a different one-byte key is not taken for the predicted one: the identity field is missing')
})

test('unknown keys, wherever the hub writes them, end up under hubExtra at the end of their record, byte for byte as the normalizer\'s', async (t) => {
  const list = compileTranscoder({ type: 'list', item: Sp2Container }, { offset: OFFSET })
  const doc = compileTranscoder({ type: 'record', item: identityOnly(Sp2Document) }, { offset: OFFSET })
  const op = operations.find(o => o.id === 'document_sp2_container/cargo_owner')!
  const c = '"id_sp2_container":1,"container_no":"A","gate_pass":null'
  const cases: Array<[string, string, string]> = [
    ['none', `[{${c}}]`, '[{"sp2ContainerId":1,"containerNo":"A","gatePass":null}]'],
    ['first', `[{"x_a":1,${c}}]`, '[{"sp2ContainerId":1,"containerNo":"A","gatePass":null,"hubExtra":{"xA":1}}]'],
    ['between and last', '[{"id_sp2_container":1,"x_a":[1,{"y_b":2}],"container_no":"A","gate_pass":null,"z":"q"}]',
      '[{"sp2ContainerId":1,"containerNo":"A","gatePass":null,"hubExtra":{"xA":[1,{"yB":2}],"z":"q"}}]'],
    ['in each of two items', `[{${c},"p":1},{"q":{},${c}}]`,
      '[{"sp2ContainerId":1,"containerNo":"A","gatePass":null,"hubExtra":{"p":1}},{"sp2ContainerId":1,"containerNo":"A","gatePass":null,"hubExtra":{"q":{}}}]']
  ]
  for (const [name, body, expected] of cases) {
    t.equal(list(Buffer.from(body))?.json.toString(), expected, name)
    const ref = compileNormalizer(Sp2Container, { offset: OFFSET })
    t.equal(JSON.stringify((JSON.parse(body) as unknown[]).map(item => ref(item))), expected, `${name}: the normalizer's bytes`)
  }
  t.ok(agree(op, `[{"x_a":1,${c},"id_document_sp2":"${U}"}]`),
    'the cargo-owner lookup: fast path, the reference path\'s answer')
  const nested = `{"o_k":1,"id_document_sp2":"${U}","container":[{"container_no":"C","n_k":2}],` +
    '"mst_platform":{"p_k":3},"z_k":4}'
  t.same(JSON.parse(doc(Buffer.from(nested))?.json.toString() ?? 'null'), {
    sp2Id: U,
    containers: [{ containerNo: 'C', hubExtra: { nK: 2 } }],
    platform: { hubExtra: { pK: 3 } },
    hubExtra: { oK: 1, zK: 4 }
  }, 'nested records each keep their own')
  const twice = `{"id_document_sp2":"${U}","container":[{"container_no":"C","x":1,"x":2}]}`
  t.equal(doc(Buffer.from(twice)), undefined, 'a duplicate unknown key, nested: the reference path')
})

test('a required field left out, or null where it may not be, is left to the reference path, which reports it', async (t) => {
  const list = compileTranscoder({ type: 'list', item: Sp2Container }, { offset: OFFSET })
  const bl = compileTranscoder({ type: 'record', item: BlEntry }, { offset: OFFSET })
  t.ok(list(Buffer.from('[{"id_sp2_container":1,"container_no":"A","gate_pass":null}]')), 'all there: the fast path')
  t.equal(list(Buffer.from('[{"container_no":"A","gate_pass":null}]')), undefined, 'an integer left out')
  t.equal(list(Buffer.from('[{"id_sp2_container":1,"container_no":"A"}]')), undefined, 'a field that may be null left out')
  t.equal(list(Buffer.from('[{"id_sp2_container":null,"container_no":"A","gate_pass":null}]')), undefined, 'null where it may not be')
  t.equal(bl(Buffer.from('{"bl_no":"B"}')), undefined, 'a BL entry without its date')
  const op = operations.find(o => o.id === 'noblbc16')!
  const ref = reference(op, '{"Data BL BC 1.6":[{"bl_no":"B"}]}')
  t.match(ref.ok ? undefined : ref.error, { name: 'ShapeError', path: /bl_date$/ }, 'the reference path names the field')
})

test('the sandbox\'s SP2 lists (20 and 500 documents) take the fast path, equal to the reference path', async (t) => {
  const dir = t.testdir()
  const bodies = await prepareBodies(dir)
  const op = operations.find(o => o.id === 'document_sp2/host-to-host')!
  for (const target of [bodies.sp2.twenty, bodies.sp2.fiveHundred]) {
    const text = await readFile(target.file, 'utf8')
    t.ok(agree(op, text), `${target.documents} documents: fast path, same answer`)
  }
  const bl = operations.find(o => o.id === 'noblbc20')!
  t.ok(agree(bl, await readFile(bodies.blListFile, 'utf8')), 'the BL list: fast path, same answer')
})

test('each answer gets its own exact buffer, the frame around it; the reused scratch leaks into none', async (t) => {
  const dir = t.testdir()
  const bodies = await prepareBodies(dir)
  const op = operations.find(o => o.id === 'document_sp2/host-to-host')!
  const big = await readFile(bodies.sp2.fiveHundred.file)
  const small = await readFile(bodies.sp2.twenty.file)
  const frame = { head: Buffer.from('<<'), tail: (count: number | undefined) => Buffer.from(`|${String(count)}>>`) }
  const first = op.transcode!(small, frame)!
  const firstText = first.framed.toString('utf8')
  // The scratch grows for the large answer and is overwritten by it, and again by the small one.
  const second = op.transcode!(big, frame)!
  const third = op.transcode!(small)!
  t.equal(first.framed.toString('utf8'), firstText, 'the first answer is unchanged by the runs after it')
  t.ok(firstText.startsWith('<<[{') && firstText.endsWith(`}]|${bodies.sp2.twenty.documents}>>`), 'head, JSON, tail(count)')
  t.equal(first.framed.length, 2 + first.json.length + `|${bodies.sp2.twenty.documents}>>`.length, 'exactly sized')
  t.equal(first.json.buffer, first.framed.buffer, 'the JSON is a view into the framed buffer')
  t.equal(`<<${first.json.toString('utf8')}|${bodies.sp2.twenty.documents}>>`, firstText)
  t.equal(third.json.toString('utf8'), first.json.toString('utf8'), 'no frame: the JSON alone, the same')
  t.ok(third.framed.equals(third.json) && third.framed.length === third.json.length, 'no frame: framed is the JSON')
  t.not(third.json.buffer, first.json.buffer, 'separate memory')
  t.equal(second.count, bodies.sp2.fiveHundred.documents)
  const ref = reference(op, big.toString('utf8'))
  t.same(JSON.parse(second.json.toString('utf8')), JSON.parse(ref.ok ? ref.json : 'null'), 'the large answer, as the reference path reads it')
})

test('a drifted answer is read by the reference path and counted', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({ url: '/v1/customs/bc28/containers?blNo=SBX-DRIFT' })
  t.equal(res.statusCode, 200)
  const metric = await app.metrics.registry.getSingleMetric('gateway_upstream_slow_path_total')?.get()
  t.same(metric?.values.map(v => [v.labels.operation, v.value]), [['kontainerbc28', 1]])
})

test('large answers are read one per turn of the event loop, in order, errors included', async (t) => {
  const turns = oneTurnEach()
  const order: string[] = []
  const jobs = [
    turns.run(() => { order.push('a'); return 1 }),
    turns.run(() => { order.push('b'); throw new Error('bad answer') }),
    turns.run(() => { order.push('c'); return 3 })
  ]
  // Queued after the jobs: it runs between them, not after all of them.
  setImmediate(() => order.push('io'))
  const settled = await Promise.allSettled(jobs)
  t.same(order, ['a', 'io', 'b', 'c'])
  t.same(settled.map(s => s.status === 'fulfilled' ? s.value : (s.reason as Error).message), [1, 'bad answer', 3])
})

test('the 500-document SP2 list through the gateway: the large-answer path, transcoded', async (t) => {
  const { app } = await build(t)
  const { npwp, blNo, blDate, documents } = SANDBOX_FIXTURES.benchmark.fiveHundred
  const res = await app.inject({ url: `/v1/sp2/documents?npwp=${npwp}&blNo=${blNo}&blDate=${blDate}` })
  t.equal(res.statusCode, 200)
  t.ok(res.rawPayload.length > 256 * 1024, `${res.rawPayload.length} bytes`)
  const body = res.json<{ data: Array<{ sp2Id: string }>, meta: { count: number } }>()
  t.equal(body.meta.count, documents)
  t.equal(body.data.length, documents)
  const slowPath = await app.metrics.registry.getSingleMetric('gateway_upstream_slow_path_total')?.get()
  t.same(slowPath?.values ?? [], [], 'the fast path read it')
})
