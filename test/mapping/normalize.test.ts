import { test } from 'tap'
import { compileNormalizer } from '../../src/mapping/normalize.ts'
import { ShapeError } from '../../src/mapping/shape-error.ts'
import { camelCase, namesOf } from '../../src/catalogue/resource-spec.ts'
import {
  ALL_RESOURCES, Bc20Declaration, BlEntry, BookedAnswer, CargoOwnerContainer, OfferAnswer,
  Sp2Container, Sp2Document
} from '../../src/catalogue/resources.ts'
import { cachedCamelCase, camelCaseDeep, spellingsOf } from '../../src/mapping/fields.ts'
import { documentedTolerance, DRIFT } from '../../src/mapping/drift.ts'
import { identityOnly } from '../fixtures/loose-specs.ts'

test('generic camelCase of unknown keys', async (t) => {
  t.equal(camelCase('id_document_sp2'), 'idDocumentSp2')
  t.equal(camelCase('Data BL BC 2.0'), 'dataBlBc20')
  t.equal(camelCase('mstPlatformServices'), 'mstPlatformServices')
  t.equal(camelCase('NO_BL'), 'noBl')
  t.equal(camelCase('___'), '___', 'nothing to split keeps the key')
  t.same(camelCaseDeep({ a_b: [{ c_d: 1 }], e: null }), { aB: [{ cD: 1 }], e: null })
})

test('a compiled normalizer renames, converts and keeps unknown fields under ' +
  'hubExtra', async (t) => {
  const normalize = compileNormalizer(Sp2Container, { offset: '+07:00' })
  t.strictSame(
    normalize({
      id_sp2_container: '7',
      container_no: 'TCLU6470801',
      gate_pass: '',
      extra_field: { nested_key: 1 },
      'Hub Note': 'x'
    }),
    {
      sp2ContainerId: 7,
      containerNo: 'TCLU6470801',
      gatePass: null,
      hubExtra: { extraField: { nestedKey: 1 }, hubNote: 'x' }
    },
    'beside ours only under hubExtra'
  )
  t.strictSame(
    normalize({ id_sp2_container: 7, container_no: 'X', gate_pass: null }),
    { sp2ContainerId: 7, containerNo: 'X', gatePass: null },
    'no hubExtra without extra fields'
  )
  t.strictSame(
    normalize({ id_sp2_container: 7, container_no: 'X', gate_pass: 'GP-1', hub_extra: 1 }),
    { sp2ContainerId: 7, containerNo: 'X', gatePass: 'GP-1', hubExtra: { hubExtra: 1 } },
    'a hub key spelling hubExtra is one of its fields'
  )
})

test('a required field: missing, null where it may not be, or a null string where it may not be ' +
  'null is a ShapeError naming it', async (t) => {
  const normalize = compileNormalizer(Sp2Container, { offset: '+07:00' })
  t.equal(
    shapePath(() => normalize({ container_no: 'X', gate_pass: null })),
    'Sp2Container.id_sp2_container',
    'missing'
  )
  t.equal(
    shapePath(() => normalize({ container_no: 'X', id_sp2_container: 7 })),
    'Sp2Container.gate_pass',
    'a required field that may be null is still sent'
  )
  t.equal(
    shapePath(() => normalize({ container_no: 'X', id_sp2_container: null, gate_pass: null })),
    'Sp2Container.id_sp2_container',
    'null where it may not be null'
  )
  const tolerant = compileNormalizer(Sp2Container, {
    offset: '+07:00',
    tolerance: { ...documentedTolerance(), nullStrings: new Set(['null', '']) }
  })
  t.equal(
    shapePath(() => tolerant({ container_no: 'X', id_sp2_container: 'null', gate_pass: 'null' })),
    'Sp2Container.id_sp2_container',
    "a profile's null string where the field may not be null: no value, so not the documented shape"
  )
  t.strictSame(
    tolerant({ container_no: 'X', id_sp2_container: '7', gate_pass: 'null', container_size: '' }),
    { sp2ContainerId: 7, containerNo: 'X', gatePass: null },
    'a null string: null on a required field that may be null; an optional field left out'
  )
  const bl = compileNormalizer(BlEntry, { offset: '+07:00' })
  t.equal(
    shapePath(() => bl({ bl_no: 'B' })),
    'BillOfLading.bl_date',
    'a BL entry without its date'
  )
  t.strictSame(
    bl({ bl_no: 'B', BL_DATE: '2024-04-23 03:20:00.0' }),
    { blNo: 'B', blDate: '2024-04-23', blDateTime: '2024-04-23T03:20:00.0+07:00' },
    'a required field in another spelling is there, both its names'
  )
  const tolerantBl = compileNormalizer(BlEntry, {
    offset: '+07:00',
    tolerance: { ...documentedTolerance(), nullStrings: new Set(['null']) }
  })
  t.equal(
    shapePath(() => tolerantBl({ bl_no: 'B', blDate: 'null' })),
    'BillOfLading.blDate',
    'a null string in another spelling: the same shape error, under the key the hub sent'
  )
  const dayOnly = compileNormalizer(BlEntry, {
    offset: '+07:00',
    tolerance: { ...documentedTolerance(), dayOnly: true }
  })
  t.strictSame(
    dayOnly({ bl_no: 'B', bl_date: '2024-04-23' }),
    { blNo: 'B', blDate: '2024-04-23' },
    'the day alone: the date answered, no date-time (it is never required)'
  )
})

/** An SP2 document's id: a UUID, as its schema says. */
const ID = '3f2504e0-4f89-11d3-9a0c-0305e82c3301'

test('flags, dates and nested records', async (t) => {
  const normalize = compileNormalizer(identityOnly(Sp2Document), { offset: '+07:00' })
  const out = normalize({
    id_document_sp2: ID,
    is_finished: '1',
    request_date: '2024-03-01 08:15:00',
    paid_thrud_date: '2024-03-05',
    td_document: {
      id_document: 1,
      finish_do: 0,
      do_date: null,
      mst_document_type: { mst_process_type: { process_name: 'Impor' } }
    },
    container: [],
    sp2_log: [{ create_date: '2024-03-01 09:00:00', status: 'Finish' }]
  })
  t.equal(out.finished, true)
  t.equal(out.requestedAt, '2024-03-01T08:15:00+07:00')
  t.equal(out.paidThroughDate, '2024-03-05')
  t.same(out.customsDocument, {
    documentId: 1,
    deliveryOrderFinished: false,
    deliveryOrderDate: null,
    documentTypeDetails: { processType: { processName: 'Impor' } }
  })
  t.same(out.logs, [{ createdAt: '2024-03-01T09:00:00+07:00', status: 'Finish' }])
})

/** The path of the ShapeError fn throws, or undefined when it throws none. */
function shapePath (fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    if (error instanceof ShapeError) return error.path
    throw error
  }
  return undefined
}

test('a value its field refuses: null where it may be, else left out, and counted', async (t) => {
  let bits = 0
  const tolerance = documentedTolerance((bit) => { bits |= bit })
  const normalize = compileNormalizer(identityOnly(Sp2Document), { offset: '+07:00', tolerance })
  const cases: Array<[Record<string, unknown>, Record<string, unknown>, string]> = [
    [{ is_finished: 2 }, {}, 'a flag of 2'],
    [{ price: 'cheap', party: 1.5 }, {}, 'no number, no integer'],
    [{ terminal: {}, status: null }, {}, 'an object or null where a string goes'],
    [{ paid_thrud_date: '2024-02-30', proforma_date: '21-MAY-2' }, {}, 'no real day'],
    [{ request_date: '2024-03-01 24:00:00' }, {}, 'no real time'],
    [{ url: [], id_ff_ppjk: true }, { documentUrl: null, forwarderId: null }, 'may be null: null'],
    [{ container: [{ container_no: 'X', gate_pass: {} }] },
      { containers: [{ containerNo: 'X', gatePass: null }] }, 'in a nested record']
  ]
  for (const [hub, ours, name] of cases) {
    bits = 0
    t.strictSame(normalize({ id_document_sp2: ID, ...hub }), { sp2Id: ID, ...ours }, name)
    t.equal(bits, DRIFT.invalidValue, `${name}: counted as invalid-value`)
  }
  const owned = compileNormalizer(CargoOwnerContainer, { offset: '+07:00' })
  const container = { container_no: 'X', id_sp2_container: 7, gate_pass: null }
  t.strictSame(owned({ ...container, id_document_sp2: '12' }),
    { sp2ContainerId: 7, containerNo: 'X', gatePass: null }, 'an optional id, no UUID: left out')
})

test('a refused value, required and never null, is a ShapeError naming the field', async (t) => {
  const loose = compileNormalizer(identityOnly(Sp2Document), { offset: '+07:00' })
  const path = 'Sp2Document.id_document_sp2'
  t.equal(shapePath(() => loose({ id_document_sp2: ID, container: {} })), 'Sp2Document.container')
  t.equal(shapePath(() => loose({ is_finished: 1 })), path, 'identity required')
  t.equal(shapePath(() => loose({ id_document_sp2: '12' })), path, 'no UUID')
  t.throws(() => loose([]), ShapeError)
  t.throws(() => loose(null), ShapeError)
  const strict = compileNormalizer(Sp2Container, { offset: '+07:00' })
  const container = { container_no: 'X', id_sp2_container: 7 }
  const ours = { sp2ContainerId: 7, containerNo: 'X' }
  t.equal(shapePath(() => strict({ ...container, id_sp2_container: 'seven', gate_pass: null })),
    'Sp2Container.id_sp2_container', 'a required integer')
  t.strictSame(strict({ ...container, gate_pass: 12.5 }), { ...ours, gatePass: '12.5' },
    'a number where a string goes is its text')
  t.strictSame(strict({ ...container, gate_pass: false }), { ...ours, gatePass: null },
    'required, but it may be null: null')
  const bl = compileNormalizer(BlEntry, { offset: '+07:00' })
  t.equal(shapePath(() => bl({ bl_no: 'B', bl_date: '21-MAY-2' })), 'BillOfLading.bl_date')
  t.equal(shapePath(() => bl({ bl_no: 'B', bl_date: '2024-02-30' })), 'BillOfLading.bl_date')
})

test('the day-month-name forms of an Oracle-backed hub are read as the day they say', async (t) => {
  let bits = 0
  const tolerance = { ...documentedTolerance((bit) => { bits |= bit }), dayOnly: true }
  const bl = compileNormalizer(BlEntry, { offset: '+07:00', tolerance })
  const day = (text: string) => bl({ bl_no: 'B', bl_date: text })
  t.strictSame(day('21-MAY-23'), { blNo: 'B', blDate: '2023-05-21' }, 'no date-time')
  t.strictSame(day('01-Feb-1999'), { blNo: 'B', blDate: '1999-02-01' })
  t.strictSame(day('29-feb-24'), { blNo: 'B', blDate: '2024-02-29' })
  t.strictSame(day('31-DEC-50'), { blNo: 'B', blDate: '1950-12-31' }, 'YY 50-99: 19YY')
  t.equal(bits, DRIFT.dateForm, 'another form than documented: date-form, nothing refused')
  const timed = compileNormalizer(BlEntry, { offset: '+07:00' })
  t.strictSame(timed({ bl_no: 'B', bl_date: '21-MAY-23' }),
    { blNo: 'B', blDate: '2023-05-21', blDateTime: '2023-05-21T00:00:00+07:00' },
    'where the profile expects a time: its midnight, as for YYYY-MM-DD')
})

test('a field the spec maps, in another spelling, is renamed like the field, or dropped where ' +
  'the field is there: never two names', async (t) => {
  const booked = compileNormalizer(BookedAnswer, { offset: '+07:00' })
  for (const key of [
    'id_request_booking',
    'IdRequestBooking',
    'ID_REQUEST_BOOKING',
    'id-request-booking',
    'bookingRequestId'
  ]) {
    t.same(
      booked({ message: 'ok', [key]: 'BKG-1', is_booked: 1 }),
      { upstreamMessage: 'ok', bookingRequestId: 'BKG-1', booked: true },
      `${key}, and is_booked, converted as the field is`
    )
  }
  t.same(
    booked({
      idRequestBooking: 'BKG-1',
      id_request_booking: 'BKG-1',
      IdRequestBooking: 'BKG-2',
      isBooked: 0
    }),
    { bookingRequestId: 'BKG-1', booked: false },
    "the hub's own spelling wins; the others are dropped"
  )
  t.same(
    booked({ id_request_booking: 'BKG-1', IdRequestBooking: 'BKG-2' }),
    { bookingRequestId: 'BKG-1' },
    'of two other spellings, the first'
  )
  const offer = compileNormalizer(OfferAnswer, { offset: '+07:00' })
  t.same(
    offer({
      message: 'ok',
      id_request_booking: 'B',
      id_service_order: 'SO-1',
      waktu_penawaran: '2024-03-01 08:15:00',
      other_thing: 1
    }),
    {
      upstreamMessage: 'ok',
      bookingRequestId: 'B',
      serviceOrderId: 'SO-1',
      offeredAt: '2024-03-01T08:15:00+07:00',
      hubExtra: { otherThing: 1 }
    },
    "converted by the field's rule; unknown fields still kept, under hubExtra"
  )
  // A required field in another spelling is there.
  const declaration = compileNormalizer(Bc20Declaration, { offset: '+07:00' })
  t.same(declaration({ noPib: '350420', tgl_pib: '2024-02-20 00:00:00.0' }), {
    pibNo: '350420',
    pibDate: '2024-02-20',
    pibDateTime: '2024-02-20T00:00:00.0+07:00'
  })
  t.throws(() => declaration({ no_pib_x: '1' }), ShapeError, 'still required')
  t.same(booked({ is_booked: 'yes' }), {}, 'a value the field refuses: left out, as under its name')
  const container = compileNormalizer(Sp2Container, { offset: '+07:00' })
  t.throws(
    () => container({ container_no: 'X', IdSp2Container: 'seven', gate_pass: null }),
    { name: 'ShapeError', message: /IdSp2Container/ },
    "a required one: the error, the hub's key"
  )
})

test('no two fields of a spec share a spelling (which would leave it an unknown ' +
  'field)', async (t) => {
  for (const spec of ALL_RESOURCES) {
    const spellings = spec.fields.flatMap((f) => [
      ...new Set([cachedCamelCase(f.upstream), ...namesOf(f)])
    ])
    t.equal(new Set(spellings).size, spellings.length, spec.id)
    t.equal(
      spellingsOf(spec, spec.fields).size,
      spellings.length,
      `${spec.id}: every spelling renames`
    )
  }
})
