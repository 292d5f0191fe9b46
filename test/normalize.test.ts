import { test } from 'tap'
import { compileNormalizer } from '../src/mapping/normalize.ts'
import { ShapeError } from '../src/mapping/shape-error.ts'
import { camelCase, namesOf } from '../src/catalogue/resource-spec.ts'
import { ALL_RESOURCES, Bc20Declaration, BookedAnswer, OfferAnswer, Sp2Container, Sp2Document } from '../src/catalogue/resources.ts'
import { cachedCamelCase, camelCaseDeep, spellingsOf } from '../src/mapping/fields.ts'

test('generic camelCase of unknown keys', async (t) => {
  t.equal(camelCase('id_document_sp2'), 'idDocumentSp2')
  t.equal(camelCase('Data BL BC 2.0'), 'dataBlBc20')
  t.equal(camelCase('mstPlatformServices'), 'mstPlatformServices')
  t.equal(camelCase('NO_BL'), 'noBl')
  t.equal(camelCase('___'), '___', 'nothing to split keeps the key')
  t.same(camelCaseDeep({ a_b: [{ c_d: 1 }], e: null }), { aB: [{ cD: 1 }], e: null })
})

test('a compiled normalizer renames, converts and keeps unknown fields', async (t) => {
  const normalize = compileNormalizer(Sp2Container, { offset: '+07:00' })
  t.same(normalize({ id_sp2_container: '7', container_no: 'TCLU6470801', gate_pass: '', extra_field: { nested_key: 1 } }), {
    sp2ContainerId: 7,
    containerNo: 'TCLU6470801',
    gatePass: null,
    extraField: { nestedKey: 1 }
  })
  t.same(normalize({ container_no: 'X', gate_pass: null }), { containerNo: 'X', gatePass: null })
  t.same(normalize({ container_no: 'X', gate_pass: 'GP-1' }), { containerNo: 'X', gatePass: 'GP-1' })
})

test('flags, dates and nested records', async (t) => {
  const normalize = compileNormalizer(Sp2Document, { offset: '+07:00' })
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
  const normalize = compileNormalizer(Sp2Document, { offset: '+07:00' })
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
    { upstreamMessage: 'ok', bookingRequestId: 'B', serviceOrderId: 'SO-1', offeredAt: '2024-03-01T08:15:00+07:00', otherThing: 1 }, 'converted by the field\'s rule; unknown fields still kept')
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
