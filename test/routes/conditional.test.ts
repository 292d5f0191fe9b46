import { test } from 'tap'
import { matches } from '../../src/routes/conditional.ts'
import { outcomeTag } from '../../src/routes/sources.ts'
import { composedTag, entityTag } from '../../src/upstream/entity-tag.ts'
import { gatewayError } from '../../src/errors.ts'
import { magicValue, SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { build, manualClock } from '../helpers/helper.ts'

/** Conditional requests: ETag on the lookups, If-None-Match answered 304. */

const BL = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
const TAXPAYER = `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading`
const SHIPMENT = `/v1/shipments/${F.sp2.blNo}?npwp=${F.sp2.npwp}&blDate=` +
  `${F.sp2.blDate}&documentType=bc20`
const STRONG_TAG = /^"[0-9a-f]{16}"$/

test("a lookup's ETag is a strong tag of its data: the same fresh and cached, another for other " +
  'data', async (t) => {
  const { app } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  const fresh = await app.inject({ url: BL })
  const cached = await app.inject({ url: BL })
  t.equal(cached.json().meta.cached, true)
  t.match(fresh.headers.etag, STRONG_TAG)
  t.equal(cached.headers.etag, fresh.headers.etag, '`meta` is not part of it')
  t.equal(
    fresh.headers.etag,
    entityTag(Buffer.from(JSON.stringify(fresh.json().data))),
    'over the bytes of `data`'
  )
  const other = await app.inject({
    url: `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer.npwp}`
  })
  t.not(other.headers.etag, fresh.headers.etag)
})

test('If-None-Match with the tag is a 304 without a body and without a hub call while the entry ' +
  'is fresh', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  const first = await app.inject({ url: BL })
  const etag = first.headers.etag as string
  const again = await app.inject({ url: BL, headers: { 'if-none-match': etag } })
  t.equal(again.statusCode, 304)
  t.equal(again.body, '')
  t.equal(again.headers['content-length'], undefined)
  t.equal(again.headers['content-type'], undefined)
  t.equal(again.headers.etag, etag)
  t.match(again.headers['cache-control'], /^private, max-age=\d+$/)
  t.match(again.headers.age, /^\d+$/)
  t.equal(sandbox.count('noblbc20'), 1, 'no hub call')
  // HEAD too, and a tag among others, weak or not.
  t.equal(
    (
      await app.inject({
        method: 'HEAD',
        url: BL,
        headers: { 'if-none-match': `"0000000000000000", W/${etag}` }
      })
    ).statusCode,
    304
  )
  t.equal((await app.inject({ url: BL, headers: { 'if-none-match': '*' } })).statusCode, 304)
  const changed = await app.inject({ url: BL, headers: { 'if-none-match': '"0000000000000000"' } })
  t.equal(changed.statusCode, 200, 'another tag: the whole answer')
  t.same(changed.json().data, first.json().data)
  t.equal(sandbox.count('noblbc20'), 1)
})

test('past its TTL the hub is asked, and an unchanged answer is still a 304', async (t) => {
  const clock = manualClock()
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '30' }, clock: clock.now })
  const etag = (await app.inject({ url: BL })).headers.etag as string
  clock.advance(31_000)
  const res = await app.inject({ url: BL, headers: { 'if-none-match': etag } })
  t.equal(res.statusCode, 304)
  t.equal(sandbox.count('noblbc20'), 2, 'the hub was asked')
})

test('cache-control: no-cache asks the hub afresh and compares its answer: 304 when ' +
  'unchanged', async (t) => {
  const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
  const etag = (await app.inject({ url: BL })).headers.etag as string
  const res = await app.inject({
    url: BL,
    headers: { 'if-none-match': etag, 'cache-control': 'no-cache' }
  })
  t.equal(res.statusCode, 304)
  t.equal(sandbox.count('noblbc20'), 2)
})

test('without a cache (TTL 0) every request asks the hub, and the same data has the same ' +
  'tag', async (t) => {
  const { app, sandbox } = await build(t)
  const etag = (await app.inject({ url: BL })).headers.etag as string
  t.equal((await app.inject({ url: BL, headers: { 'if-none-match': etag } })).statusCode, 304)
  t.equal(sandbox.count('noblbc20'), 2)
})

test('a record lookup and a write: the record has a tag, the write none', async (t) => {
  const { app } = await build(t)
  const { npwp, pibNo } = F.declaration
  const record = await app.inject({ url: `/v1/customs/bc20/declarations/${pibNo}?npwp=${npwp}` })
  t.match(record.headers.etag, STRONG_TAG)
  const booked = await app.inject({
    method: 'POST',
    url: `/v1/bookings/${F.bookingRequestId}/booked`,
    payload: { booked: true }
  })
  t.equal(booked.statusCode, 200)
  t.equal(booked.headers.etag, undefined)
})

test('an error has no tag, and If-None-Match does not turn it into a 304', async (t) => {
  const { app } = await build(t)
  const res = await app.inject({
    url: `/v1/customs/bc20/bills-of-lading?npwp=${magicValue('503', 'npwp')}`,
    headers: { 'if-none-match': '*' }
  })
  t.equal(res.statusCode, 503)
  t.equal(res.headers.etag, undefined)
})

const FAILING = {
  taxpayer: `/v1/taxpayers/${magicValue('503', 'npwp')}/bills-of-lading`,
  shipment: `/v1/shipments/${magicValue('503')}?npwp=${F.sp2.npwp}&blDate=` +
    `${F.sp2.blDate}&documentType=bc23`
}

for (const [name, url, failing] of [
  ['the taxpayer route', TAXPAYER, FAILING.taxpayer],
  ['a shipment', SHIPMENT, FAILING.shipment]
] as const) {
  test(`${name}: a tag composed of its sources' tags, a 304 without a hub call`, async (t) => {
    const { app, sandbox } = await build(t, { env: { CACHE_TTL_SECONDS: '60' } })
    const first = await app.inject({ url })
    t.match(first.headers.etag, STRONG_TAG)
    const calls = sandbox.count()
    const again = await app.inject({
      url,
      headers: { 'if-none-match': first.headers.etag as string }
    })
    t.equal(again.statusCode, 304)
    t.equal(again.body, '')
    t.equal(sandbox.count(), calls, 'no hub call')
    t.equal(
      (await app.inject({ url })).headers.etag,
      first.headers.etag,
      'the same while the sources are'
    )
    const failed = await app.inject({ url: failing, headers: { 'if-none-match': '*' } })
    t.equal(failed.statusCode, 503, 'every source failed: the error, not a 304')
  })
}

test('an incomplete shipment has a tag too, the same while the same source fails the same ' +
  'way', async (t) => {
  const { app } = await build(t)
  const url = SHIPMENT.replace(F.sp2.npwp, magicValue('503', 'npwp'))
  const first = await app.inject({ url })
  t.equal(first.json().meta.complete, false)
  t.match(first.headers.etag, STRONG_TAG)
  t.not(first.headers.etag, (await app.inject({ url: SHIPMENT })).headers.etag)
  const again = await app.inject({
    url,
    headers: { 'if-none-match': first.headers.etag as string }
  })
  t.equal(again.statusCode, 304)
  t.equal(again.headers['cache-control'], 'no-store')
})

test('a composed tag changes with a source\'s outcome, failures included', async (t) => {
  const ok = (etag: string): PromiseSettledResult<{ etag: string }> => ({
    status: 'fulfilled',
    value: { etag }
  })
  const failed = (
    code: 'UPSTREAM_UNAVAILABLE' | 'UPSTREAM_TIMEOUT'
  ): PromiseSettledResult<{ etag: string }> => ({ status: 'rejected', reason: gatewayError(code) })
  const tags = new Set([
    composedTag([ok('"a"'), ok('"b"')].map(outcomeTag)),
    composedTag([ok('"a"'), ok('"c"')].map(outcomeTag)),
    composedTag([ok('"a"'), failed('UPSTREAM_UNAVAILABLE')].map(outcomeTag)),
    composedTag([ok('"a"'), failed('UPSTREAM_TIMEOUT')].map(outcomeTag)),
    composedTag([ok('"b"'), ok('"a"')].map(outcomeTag))
  ])
  t.equal(tags.size, 5)
  t.equal(
    composedTag([ok('"a"'), ok('"b"')].map(outcomeTag)),
    composedTag([ok('"a"'), ok('"b"')].map(outcomeTag))
  )
})

test('If-None-Match is read as RFC 9110 writes it', async (t) => {
  const tag = '"0123456789abcdef"'
  t.ok(matches(tag, tag))
  t.ok(matches(`W/${tag}`, tag), 'weak comparison')
  t.ok(matches(`"x", ${tag}`, tag))
  t.ok(matches(' * ', tag))
  t.ok(matches('"a,b", "0123456789abcdef"', tag), 'a comma inside a tag')
  t.notOk(matches(undefined, tag))
  t.notOk(matches('0123456789abcdef', tag), 'unquoted is no tag')
  t.notOk(matches('"0123456789ABCDEF"', tag), 'compared exactly')
  t.notOk(matches('"x", *', tag), '* only alone')
})
