import { test } from 'tap'
import { camelCaseDeep } from '../src/mapping/fields.ts'
import { compileNormalizer } from '../src/mapping/normalize.ts'
import { ShapeError } from '../src/mapping/shape-error.ts'
import { camelCase } from '../src/catalogue/resource-spec.ts'
import { Sp2Container, Sp2Document } from '../src/catalogue/resources.ts'

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
