import { test } from 'tap'
import {
  readHubDate, toCompactDate, toIsoDate, toIsoDateTime, toUpstreamDateTime
} from '../../src/domain/dates.ts'
import {
  iso6346CheckDigit,
  isContainerNo,
  isNpwp,
  normalizeNpwp
} from '../../src/domain/identifiers.ts'

test('NPWP: 15 or 16 digits, dots and dashes stripped', async (t) => {
  t.ok(isNpwp('012345678901000'))
  t.ok(isNpwp('0123456789012345'))
  t.ok(isNpwp('01.234.567.8-901.000'))
  t.equal(normalizeNpwp('01.234.567.8-901.000'), '012345678901000')
  t.notOk(isNpwp('01234567890100'), '14 digits')
  t.notOk(isNpwp('01234567890123456'), '17 digits')
  t.notOk(isNpwp('01 234 567 8901000'), 'spaces')
  t.notOk(isNpwp('01234567890100O'), 'a letter O')
  t.notOk(isNpwp(''))
})

test('ISO 6346 check digits', async (t) => {
  // Published examples: CSQU3054383 (ISO 6346 standard), MSKU9070323, TCLU6470801 (sandbox).
  for (const valid of ['CSQU3054383', 'MSKU9070323', 'TCLU6470801', 'csqu3054383']) {
    t.ok(isContainerNo(valid), valid)
  }
  for (const invalid of ['CSQU3054384', 'CSQU305438', 'CSQ13054383', 'CSQU30543830', '']) {
    t.notOk(isContainerNo(invalid), invalid)
  }
  t.equal(iso6346CheckDigit('CSQU305438'), 3)
  // A remainder of 10 is written 0.
  t.equal(iso6346CheckDigit('ABCU123456'), (() => {
    const values: Record<string, number> = { A: 10, B: 12, C: 13, U: 32 }
    const digits = [values.A, values.B, values.C, values.U, 1, 2, 3, 4, 5, 6] as number[]
    return (digits.reduce((sum, d, i) => sum + d * 2 ** i, 0) % 11) % 10
  })())
})

test('dates between the hub\'s formats and ISO 8601', async (t) => {
  t.equal(toCompactDate('2024-03-01'), '20240301')
  t.equal(toIsoDateTime('2024-03-01 08:15:00.5', '+07:00'), '2024-03-01T08:15:00.5+07:00')
  t.equal(toIsoDateTime('2024-03-01 08:15:00', '+07:00'), '2024-03-01T08:15:00+07:00')
  t.equal(toIsoDateTime('2024-03-01', '+08:00'), '2024-03-01T00:00:00+08:00')
  t.equal(toIsoDateTime('not a date', '+07:00'), 'not a date', 'unknown forms pass unchanged')
  t.equal(toIsoDate('2024-03-01'), '2024-03-01')
  t.equal(toIsoDate('20240301'), '2024-03-01')
  t.equal(toIsoDate('2024-03-01 00:00:00.0'), '2024-03-01')
  t.equal(toUpstreamDateTime('2024-03-01T01:15:00Z', '+07:00'), '2024-03-01 08:15:00')
  t.equal(toUpstreamDateTime('2024-03-01T08:15:00+07:00', '+07:00'), '2024-03-01 08:15:00')
  t.equal(
    toUpstreamDateTime('2024-03-01T02:00:00+07:00', '-03:30'),
    '2024-02-29 15:30:00',
    'negative offsets and day changes'
  )
})

test('the hub\'s dates are read strictly: its forms, a real day and time, or none', async (t) => {
  const read = (value: string) => {
    const date = readHubDate(value)
    return date === undefined ? undefined : [date.day, date.time]
  }
  t.same(read('2024-03-01'), ['2024-03-01', undefined])
  t.same(read('20240301'), ['2024-03-01', undefined])
  t.same(read('2024-03-01 08:15:00'), ['2024-03-01', '08:15:00'])
  t.same(read('2024-03-01 08:15:00.0'), ['2024-03-01', '08:15:00.0'])
  t.same(read('2024-03-01T08:15:00.125'), ['2024-03-01', '08:15:00.125'])
  t.same(read('21-MAY-23'), ['2023-05-21', undefined], 'Oracle\'s default DD-MON-YY')
  t.same(read('21-May-2023'), ['2023-05-21', undefined], 'DD-MON-YYYY, the month in any case')
  t.same(read('01-jan-00'), ['2000-01-01', undefined], 'YY 00-49: 20YY')
  t.same(read('01-JAN-49'), ['2049-01-01', undefined])
  t.same(read('01-JAN-50'), ['1950-01-01', undefined], 'YY 50-99: 19YY')
  t.same(read('29-FEB-24'), ['2024-02-29', undefined], 'a leap day')
  const none = [
    '2023-02-29', '2024-02-30', '2024-04-31', '2024-13-01', '2024-00-01', '2024-01-00', '20241301',
    '1900-02-29', '2024-03-01 24:00:00', '2024-03-01 08:60:00', '2024-03-01 08:15:60',
    '2024-03-01 08:15:00.', '2024-03-01 08:15:00.5x', '2024-03-01 08:15',
    '2024-03-01T08:15:00+07:00',
    '29-FEB-23', '31-APR-23', '21-MAI-23', '21-MAY-2', '1-MAY-23', '21-MAY-023', '21 MAY 23',
    '2024-3-1', '2024/03/01', ' 2024-03-01', '', 'soon', '０2024-03-01'
  ]
  for (const value of none) {
    t.equal(readHubDate(value), undefined, `${value}: none`)
  }
  t.equal(toIsoDate('21-MAY-23'), '2023-05-21')
  t.equal(toIsoDateTime('20240301', '+07:00'), '2024-03-01T00:00:00+07:00', 'a day alone: midnight')
})
