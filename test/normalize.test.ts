import { test } from 'tap'
import { compileNormalizer } from '../src/mapping/normalize.ts'
import { ShapeError } from '../src/mapping/shape-error.ts'
import { camelCase, namesOf } from '../src/catalogue/resource-spec.ts'
import { ALL_RESOURCES, Bc20Declaration, BlEntry, BookedAnswer, OfferAnswer, Sp2Container, Sp2Document } from '../src/catalogue/resources.ts'
import { cachedCamelCase, camelCaseDeep, spellingsOf } from '../src/mapping/fields.ts'
import { documentedTolerance } from '../src/mapping/drift.ts'
import { identityOnly } from './fixtures/loose-specs.ts'

test('generic camelCase of unknown keys', async (t) => {
  t.equal(camelCase('id_document_sp2'), 'idDocumentSp2')
  t.equal(camelCase('Data BL BC 2.0'), 'dataBlBc20')
  t.equal(camelCase('mstPlatformServices'), 'mstPlatformServices')
  t.equal(camelCase('NO_BL'), 'noBl')
  t.equal(camelCase('___'), '___', 'nothing to split keeps the key')
  t.same(camelCaseDeep({ a_b: [{ c_d: 1 }], e: null }), { aB: [{ cD: 1 }], e: null })
})

test('a compiled normalizer renames, converts and keeps unknown fields under hubExtra', async (t) => {
  const normalize = compileNormalizer(Sp2Container, { offset: '+07:00' })
  t.strictSame(normalize({ id_sp2_container: '7', container_no: 'TCLU6470801', gate_pass: '', extra_field: { nested_key: 1 }, 'Hub Note': 'x' }), {
    sp2ContainerId: 7,
    containerNo: 'TCLU6470801',
    gatePass: null,
    hubExtra: { extraField: { nestedKey: 1 }, hubNote: 'x' }
  }, 'beside ours only under hubExtra')
  t.strictSame(normalize({ id_sp2_container: 7, container_no: 'X', gate_pass: null }), { sp2ContainerId: 7, containerNo: 'X', gatePass: null }, 'no hubExtra without extra fields')
  t.strictSame(normalize({ id_sp2_container: 7, container_no: 'X', gate_pass: 'GP-1', hub_extra: 1 }), { sp2ContainerId: 7, containerNo: 'X', gatePass: 'GP-1', hubExtra: { hubExtra: 1 } }, 'a hub key spelling hubExtra is one of its fields')
})

test('a required field: missing, null where it may not be, or a null string where it may not be null is a ShapeError naming it', async (t) => {
  const normalize = compileNormalizer(Sp2Container, { offset: '+07:00' })
  t.equal(shapePath(() => normalize({ container_no: 'X', gate_pass: null })), 'Sp2Container.id_sp2_container', 'missing')
  t.equal(shapePath(() => normalize({ container_no: 'X', id_sp2_container: 7 })), 'Sp2Container.gate_pass', 'a required field that may be null is still sent')
  t.equal(shapePath(() => normalize({ container_no: 'X', id_sp2_container: null, gate_pass: null })), 'Sp2Container.id_sp2_container', 'null where it may not be null')
  const tolerant = compileNormalizer(Sp2Container, { offset: '+07:00', tolerance: { ...documentedTolerance(), nullStrings: new Set(['null', '']) } })
  t.equal(shapePath(() => tolerant({ container_no: 'X', id_sp2_container: 'null', gate_pass: 'null' })), 'Sp2Container.id_sp2_container', 'a profile\'s null string where the field may not be null: no value, so not the documented shape')
  t.strictSame(tolerant({ container_no: 'X', id_sp2_container: '7', gate_pass: 'null', container_size: '' }), { sp2ContainerId: 7, containerNo: 'X', gatePass: null },
    'a null string: null on a required field that may be null; an optional field left out')
  const bl = compileNormalizer(BlEntry, { offset: '+07:00' })
  t.equal(shapePath(() => bl({ bl_no: 'B' })), 'BillOfLading.bl_date', 'a BL entry without its date')
  t.strictSame(bl({ bl_no: 'B', BL_DATE: '2024-04-23 03:20:00.0' }), { blNo: 'B', blDate: '2024-04-23', blDateTime: '2024-04-23T03:20:00.0+07:00' }, 'a required field in another spelling is there, both its names')
  const tolerantBl = compileNormalizer(BlEntry, { offset: '+07:00', tolerance: { ...documentedTolerance(), nullStrings: new Set(['null']) } })
  t.equal(shapePath(() => tolerantBl({ bl_no: 'B', blDate: 'null' })), 'BillOfLading.blDate', 'a null string in another spelling: the same shape error, under the key the hub sent')
  const dayOnly = compileNormalizer(BlEntry, { offset: '+07:00', tolerance: { ...documentedTolerance(), dayOnly: true } })
  t.strictSame(dayOnly({ bl_no: 'B', bl_date: '2024-04-23' }), { blNo: 'B', blDate: '2024-04-23' }, 'the day alone: the date answered, no date-time (it is never required)')
})

test('flags, dates and nested records', async (t) => {
  const normalize = compileNormalizer(identityOnly(Sp2Document), { offset: '+07:00' })
  const out = normalize({
    id_document_sp2: 'u',
    is_finished: '1',
    request_date: '2024-03-01 08:15:00',
    paid_thrud_date: '2024-03-05',
    td_document: { id_document: 1, finish_do: 0, do_date: null, mst_document_type: { mst_process_type: { process_name: 'Impor' } } },
    container: [],
    sp2_log: [{ create_date: '2024-03-01 09:00:00', status: 'Finish' }]
  })
  t.equal(out.finished, true)
  t.equal(out.requestedAt, '2024-03-01T08:15:00+07:00')
  t.equal(out.paidThroughDate, '2024-03-05')
  t.same(out.customsDocument, { documentId: 1, deliveryOrderFinished: false, deliveryOrderDate: null, documentTypeDetails: { processType: { processName: 'Impor' } } })
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

test('a value that does not fit is a ShapeError naming the field', async (t) => {
  const normalize = compileNormalizer(identityOnly(Sp2Document), { offset: '+07:00' })
  t.throws(() => normalize({ id_document_sp2: 'u', is_finished: 2 }), ShapeError)
  t.equal(shapePath(() => normalize({ id_document_sp2: 'u', price: 'cheap' })), 'Sp2Document.price')
  t.equal(shapePath(() => normalize({ id_document_sp2: 'u', container: {} })), 'Sp2Document.container')
  t.equal(shapePath(() => normalize({ id_document_sp2: 'u', container: [{ container_no: 'X', gate_pass: {} }] })), 'Sp2Document.container[0].gate_pass')
  t.equal(shapePath(() => normalize({ is_finished: 1 })), 'Sp2Document.id_document_sp2', 'identity required')
  t.throws(() => normalize([]), ShapeError)
  t.throws(() => normalize(null), ShapeError)
})

test('a field the spec maps, in another spelling, is renamed like the field, or dropped where the field is there: never two names', async (t) => {
  const booked = compileNormalizer(BookedAnswer, { offset: '+07:00' })
  for (const key of ['id_request_booking', 'IdRequestBooking', 'ID_REQUEST_BOOKING', 'id-request-booking', 'bookingRequestId']) {
    t.same(booked({ message: 'ok', [key]: 'BKG-1', is_booked: 1 }), { upstreamMessage: 'ok', bookingRequestId: 'BKG-1', booked: true }, `${key}, and is_booked, converted as the field is`)
  }
  t.same(booked({ idRequestBooking: 'BKG-1', id_request_booking: 'BKG-1', IdRequestBooking: 'BKG-2', isBooked: 0 }), { bookingRequestId: 'BKG-1', booked: false }, 'the hub\'s own spelling wins; the others are dropped')
  t.same(booked({ id_request_booking: 'BKG-1', IdRequestBooking: 'BKG-2' }), { bookingRequestId: 'BKG-1' }, 'of two other spellings, the first')
  const offer = compileNormalizer(OfferAnswer, { offset: '+07:00' })
  t.same(offer({ message: 'ok', id_request_booking: 'B', id_service_order: 'SO-1', waktu_penawaran: '2024-03-01 08:15:00', other_thing: 1 }),
    { upstreamMessage: 'ok', bookingRequestId: 'B', serviceOrderId: 'SO-1', offeredAt: '2024-03-01T08:15:00+07:00', hubExtra: { otherThing: 1 } }, 'converted by the field\'s rule; unknown fields still kept, under hubExtra')
  // A required field in another spelling is there.
  const declaration = compileNormalizer(Bc20Declaration, { offset: '+07:00' })
  t.same(declaration({ noPib: '350420', tgl_pib: '2024-02-20 00:00:00.0' }), { pibNo: '350420', pibDate: '2024-02-20', pibDateTime: '2024-02-20T00:00:00.0+07:00' })
  t.throws(() => declaration({ no_pib_x: '1' }), ShapeError, 'still required')
  t.throws(() => booked({ is_booked: 'yes' }), { name: 'ShapeError', message: /is_booked/ }, 'a value the field cannot take is the field\'s error, under the key the hub sent')
})

test('no two fields of a spec share a spelling (which would leave it an unknown field)', async (t) => {
  for (const spec of ALL_RESOURCES) {
    const spellings = spec.fields.flatMap(f => [...new Set([cachedCamelCase(f.upstream), ...namesOf(f)])])
    t.equal(new Set(spellings).size, spellings.length, spec.id)
    t.equal(spellingsOf(spec, spec.fields).size, spellings.length, `${spec.id}: every spelling renames`)
  }
})
