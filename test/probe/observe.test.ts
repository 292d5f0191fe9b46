import { test } from 'tap'
import { operationOf } from '../../src/catalogue/operations.ts'
import {
  dateFormOf, envelopeStatus, errorShape, stateMembers, locate, parseJson, textAt
} from '../../src/probe/observe.ts'

// The probe's reading of an answer, on the forms the hub's variants send.

test('where the data is', async (t) => {
  const list = operationOf('noblbc20')
  t.same(locate(list, [{ bl_no: 'A' }], 'x'), { key: '*', items: [{ bl_no: 'A' }] }, 'a bare array')
  t.same(
    locate(list, { data: [], other: [] }, 'x'),
    undefined,
    'two arrays and not the configured key: not found'
  )
  t.same(locate(list, 'text', undefined), undefined, 'not an object')
  const record = operationOf('BC20ByNoPib')
  t.same(
    locate(record, { message: 'Data tidak ditemukan' }, undefined),
    undefined,
    'a record without its identity'
  )
  t.same(locate(record, { no_pib: '1' }, undefined), { key: undefined, items: [{ no_pib: '1' }] })
  const records = operationOf('BC20ByNoBL')
  t.same(
    locate(records, { data: [{ no_pib: '1' }], result: 'Ok' }, undefined),
    { key: 'data', items: [{ no_pib: '1' }] },
    'records under a key'
  )
})

test('forms and shapes', async (t) => {
  t.equal(dateFormOf('17/02/2024'), 'other')
  t.same(errorShape(['x']), [])
  const errors = { fault: { text: 'no', code: 3 }, error: 'x', n: 1 }
  t.same(errorShape(errors), ['error', 'fault.text'], 'the usual names first')
  t.equal(textAt({ a: 'x' }, 'a.b'), undefined)
  t.equal(textAt({ a: { b: 2 } }, 'a.b'), undefined)
  const envelope = { status: 'success', data: [] }
  t.same(envelopeStatus(envelope, 'data'), [{ field: 'status', value: 'success' }])
  t.same(envelopeStatus([], undefined), [])
  const declaration = { no_pib: '1', status: 'SPPB' }
  t.same(envelopeStatus(declaration, undefined), [], 'never a record\'s own state')
  const enveloped = { status: 'ok', data: [declaration] }
  t.same(envelopeStatus(enveloped, 'data'), [{ field: 'status', value: 'ok' }])
  t.same(errorShape({ errors: [{ detail: 'Tidak ada', code: 'E1' }] }), ['errors.0.detail'])
  t.same(errorShape({ status: 404, error: 'Not Found', path: '/x', timestamp: '2024-01-01T00:00' }),
    ['error'], 'a front\'s 404: its words, not its address or time')
  t.equal(textAt({ errors: [{ detail: 'x' }] }, 'errors.0.detail'), 'x')
  const failed = { status: 'failed', errors: [{ detail: 'no' }] }
  t.equal(locate(operationOf('kontainerbc20'), failed, 'data'), undefined, 'errors are no data')
  t.same(stateMembers({ status: 'failed', message: 'x' }), [{ field: 'status', value: 'failed' }])
  t.equal(parseJson('<html>'), undefined)
})
