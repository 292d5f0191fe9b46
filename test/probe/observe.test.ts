import { test } from 'tap'
import { operationOf } from '../../src/catalogue/operations.ts'
import { dateFormOf, errorShape, locate, parseJson, statusMember, textAt } from '../../src/probe/observe.ts'

// The probe's reading of an answer, on the forms the hub's variants send.

test('where the data is', async (t) => {
  const list = operationOf('noblbc20')
  t.same(locate(list, [{ bl_no: 'A' }], 'x'), { key: '*', items: [{ bl_no: 'A' }] }, 'a bare array')
  t.same(locate(list, { data: [], other: [] }, 'x'), undefined, 'two arrays and not the configured key: not found')
  t.same(locate(list, 'text', undefined), undefined, 'not an object')
  const record = operationOf('BC20ByNoPib')
  t.same(locate(record, { message: 'Data tidak ditemukan' }, undefined), undefined, 'a record without its identity')
  t.same(locate(record, { no_pib: '1' }, undefined), { key: undefined, items: [{ no_pib: '1' }] })
  const records = operationOf('BC20ByNoBL')
  t.same(locate(records, { data: [{ no_pib: '1' }], result: 'Ok' }, undefined), { key: 'data', items: [{ no_pib: '1' }] }, 'records under a key')
})

test('forms and shapes', async (t) => {
  t.equal(dateFormOf('17/02/2024'), 'other')
  t.same(errorShape(['x']), [])
  t.same(errorShape({ fault: { text: 'no', code: 3 }, error: 'x', n: 1 }), ['fault.text', 'error'])
  t.equal(textAt({ a: 'x' }, 'a.b'), undefined)
  t.equal(textAt({ a: { b: 2 } }, 'a.b'), undefined)
  t.same(statusMember({ status: 'success', data: [] }, 'data'), { field: 'status', value: 'success' })
  t.equal(statusMember([], undefined), undefined)
  t.equal(parseJson('<html>'), undefined)
})
