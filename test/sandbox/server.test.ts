import t from 'tap'
import {
  SANDBOX_ACCESS_TOKEN,
  SANDBOX_API_KEY,
  SANDBOX_FIXTURES as F
} from '../../src/sandbox/index.ts'
import { AUTH, DEV, LOOKUP, TOKEN, V3, call, get, post, qs, sandbox } from './helpers.ts'

t.test('unknown addresses answer 404 {"message":"Not Found"}', async (t) => {
  const sb = await sandbox(t)
  const paths = [
    '/',
    '/V1/HUB/INT/AUTH/',
    `/V1/HUB/INT/AUTH/noblbc99/${F.taxpayer.npwp}`,
    `/HUB-DEV/noblbc20/${F.taxpayer.npwp}`, // lookups have no development prefix
    `/V3/HUB/noblbc20/${F.taxpayer.npwp}`,
    `/V2/HUB/INT/AUTH/noblbc20/${F.taxpayer.npwp}`,
    `/V1/OTHER/INT/AUTH/noblbc20/${F.taxpayer.npwp}`,
    `/V1/HUB/INT/AUTH/NOBLBC20/${F.taxpayer.npwp}`, // operation names are case-sensitive
    `/V1/HUB/INT/AUTH/noblbc20/${F.taxpayer.npwp}/extra`,
    '/V1/HUB/INT/AUTH/document_sp2/host-to-host/',
    '/HUB-DEV/document_sp2/',
    '/V3/HUB-DEV/DetilBooking/',
    '/V1/HUB/INT/AUTH/noblbc20/%E0%A4%A'
  ]
  for (const path of paths) {
    const res = await get(sb, path)
    t.equal(res.status, 404, path)
    t.same(res.body, { message: 'Not Found' }, path)
  }
  t.equal(sb.count('unknown'), paths.length)
})

t.test('a known address with the wrong method answers 405 with allow', async (t) => {
  const sb = await sandbox(t)
  const lookup = await call(sb, 'POST', `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`, {
    headers: AUTH,
    body: {}
  })
  t.equal(lookup.status, 405)
  t.equal(lookup.headers.get('allow'), 'GET')
  t.match(lookup.body, { message: String })
  const offer = await get(sb, `${V3}/DetilBooking/`)
  t.equal(offer.status, 405)
  t.equal(offer.headers.get('allow'), 'POST')
})

t.test(
  'requests are recorded in order with operation, params, headers and body; count and reset',
  async (t) => {
    const sb = await sandbox(t)
    const before = Date.now()
    await get(sb, `${LOOKUP}/noblbc20/${qs({ npwp: F.taxpayer.npwp, extra: 'x' })}`)
    await get(sb, `${LOOKUP}/BC20ByNoPib/${F.declaration.npwp}/${F.declaration.pibNo}`)
    await post(sb, `${DEV}/document_sp2/final`, { id_document_sp2: F.sp2.sp2Id }, TOKEN)
    await call(sb, 'POST', `${DEV}/document_sp2/final`, { headers: TOKEN, raw: 'not json' })
    await get(sb, '/nowhere')
    await get(sb, `${LOOKUP}/noblbc20/${F.taxpayer16.npwp}`)

    t.equal(sb.requests.length, 6)
    t.same(
      sb.requests.map((r) => r.operation),
      ['noblbc20', 'BC20ByNoPib', 'document_sp2/final', 'document_sp2/final', 'unknown', 'noblbc20']
    )
    const [first, second, third, fourth, fifth] = sb.requests
    t.match(first, {
      method: 'GET',
      path: '/V1/HUB/INT/AUTH/noblbc20/',
      query: { npwp: F.taxpayer.npwp, extra: 'x' },
      params: { npwp: F.taxpayer.npwp },
      body: undefined,
      headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN }
    })
    t.ok((first?.at ?? 0) >= before && (first?.at ?? 0) <= Date.now())
    t.same(second?.params, { npwp: F.declaration.npwp, nopib: F.declaration.pibNo })
    t.same(second?.query, {})
    t.same(third?.body, { id_document_sp2: F.sp2.sp2Id })
    t.equal(third?.method, 'POST')
    t.equal(fourth?.body, 'not json', 'a body that is not JSON is kept as text')
    t.equal(fifth?.path, '/nowhere')

    t.equal(sb.count(), 6)
    t.equal(sb.count('noblbc20'), 2)
    t.equal(sb.count('document_sp2/final'), 2)
    t.equal(sb.count('noblbc16'), 0)
    const held = sb.requests
    sb.reset()
    t.equal(sb.count(), 0)
    t.equal(held.length, 0, 'reset clears the same array')
    await get(sb, `${LOOKUP}/noblbc23/${F.taxpayer.npwp}`)
    t.equal(sb.count('noblbc23'), 1)
  }
)

t.test(
  'the record is a bounded ring of the newest requests; counts cover every request',
  async (t) => {
    const sb = await sandbox(t, { recordLimit: 5 })
    for (let i = 0; i < 12; i++) {
      await get(
        sb,
        i % 3 === 0
          ? `${LOOKUP}/noblbc16/${F.taxpayer.npwp}`
          : `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`
      )
    }
    t.equal(sb.requests.length, 5, 'only the newest five are kept')
    t.same(
      sb.requests.map((r) => r.operation),
      ['noblbc20', 'noblbc20', 'noblbc16', 'noblbc20', 'noblbc20'],
      'requests 8 to 12, in order'
    )
    t.ok(
      sb.requests.every((r, i, all) => i === 0 || r.at >= (all[i - 1]?.at ?? 0)),
      'oldest first'
    )
    t.equal(sb.count(), 12, 'count() covers every request')
    t.equal(sb.count('noblbc16'), 4)
    t.equal(sb.count('noblbc20'), 8)

    // The default keeps 1,000: a long-running sandbox does not grow with its traffic. 100 at a
    // time: 1,100 at once each wait their turn past the helper's timeout on a busy machine.
    const plain = await sandbox(t)
    for (let sent = 0; sent < 1100; sent += 100) {
      await Promise.all(
        Array.from({ length: 100 }, () => get(plain, `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`))
      )
    }
    t.equal(plain.requests.length, 1000)
    t.equal(plain.count('noblbc20'), 1100)
  }
)

t.test('two sandboxes serve identical bodies', async (t) => {
  const a = await sandbox(t)
  const b = await sandbox(t)
  const paths = [
    `${LOOKUP}/noblbc16/${F.taxpayer16.npwp}`,
    `${LOOKUP}/kontainerbc20/${F.containers.kontainerbc20.tglBl}`,
    `${LOOKUP}/BC20ByNoPib/${F.declaration.npwp}/${F.declaration.pibNo}`,
    `${DEV}/document_sp2/host-to-host/${F.sp2.npwp}/${F.sp2.blNo}/${F.sp2.blDateCompact}`,
    `${DEV}/document_sp2/host-to-host/${F.benchmark.twenty.npwp}/${F.benchmark.twenty.blNo}/` +
    `${F.benchmark.twenty.blDateCompact}`,
    `${LOOKUP}/noblbc20/${qs({ npwp: F.taxpayer.npwp, probe: 'SBX-MALFORMED' })}`
  ]
  for (const path of paths) {
    const [ra, rb] = [await get(a, path), await get(b, path)]
    t.equal(ra.status, rb.status, path)
    t.ok(ra.text.length > 10, `${path} has a body`)
    t.equal(ra.text, rb.text, path)
  }
})

t.test('pathSegment renames HUB everywhere, including containerAPI', async (t) => {
  const sb = await sandbox(t, { pathSegment: 'GW' })
  t.equal((await get(sb, `/V1/GW/INT/AUTH/noblbc20/${F.taxpayer.npwp}`)).status, 200)
  t.equal((await get(sb, `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`)).status, 404)
  const docs = await get(
    sb,
    `/GW-DEV/document_sp2/host-to-host/${F.sp2.npwp}/${F.sp2.blNo}/${F.sp2.blDateCompact}`
  )
  t.equal(docs.status, 200)
  t.match(docs.text, '"containerAPI":"/V1/GW/INT/AUTH/kontainerbc20/"')
  t.equal(
    (
      await post(
        sb,
        '/V3/GW/DetilBooking/isBooked/' + qs({ idRequestBooking: F.bookingRequestId }),
        { isBooked: 1, booking_note: '' }
      )
    ).status,
    200
  )
})

t.test('latencyMs delays every answer, errors included', async (t) => {
  const sb = await sandbox(t, { latencyMs: 150, jitterMs: 20 })
  for (const path of [`${LOOKUP}/noblbc20/${F.taxpayer.npwp}`, '/nowhere']) {
    const started = Date.now()
    await get(sb, path)
    t.ok(Date.now() - started >= 125, `${path} took ${Date.now() - started} ms`)
  }
})

t.test(
  'latencyMs can be changed while the sandbox runs: a hub that slows down and recovers',
  async (t) => {
    // The delay the sandbox chose, as it logs it; the wall time besides is the machine's.
    const delays: number[] = []
    const sb = await sandbox(t, { onRequest: (entry) => delays.push(entry.delayMs) })
    t.equal(sb.latencyMs, 0)
    sb.latencyMs = 200
    const started = Date.now()
    await get(sb, `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`)
    t.ok(Date.now() - started >= 190, `slowed down (${Date.now() - started} ms)`)
    t.equal(delays.at(-1), 200)
    sb.latencyMs = 0
    await get(sb, `${LOOKUP}/noblbc20/${F.taxpayer.npwp}`)
    t.equal(delays.at(-1), 0, 'recovered: no delay')
    t.throws(
      () => {
        sb.latencyMs = -1
      },
      { message: 'sandbox option latencyMs must be a non-negative number' }
    )
  }
)

t.test('the sandbox listens where it says and close() can be called twice', async (t) => {
  const sb = await sandbox(t)
  t.match(sb.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  await sb.close()
  await sb.close()
  await t.rejects(fetch(sb.url + '/', { signal: AbortSignal.timeout(2000) }))
})

t.test('oversized bodies are refused with 413', async (t) => {
  const sb = await sandbox(t)
  const res = await call(sb, 'POST', `${DEV}/document_sp2/final`, {
    headers: TOKEN,
    raw: JSON.stringify({ pad: 'x'.repeat(1_100_000) })
  })
  t.equal(res.status, 413)
  t.match(res.body, { message: String })
})
