import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import t from 'tap'
import { createGatewayClient } from '../../clients/typescript/src/index.ts'
import { startPageServer } from '../../examples/web/page-server.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { startRedisServer } from '../helpers/redis-server.ts'
import { startTcpProxy } from '../helpers/tcp-proxy.ts'
import { buildClient } from './build-client.ts'
import { launchChromium } from './chromium.ts'
import { listeningGateway, newClientKey } from './gateway.ts'

/**
 * examples/web in a real browser, driven like a person would: the page on
 * one origin, the gateway (on the sandbox, authentication on) on another,
 * with CORS_ORIGINS listing the page. Expected values are asked of the
 * gateway through the client, not written down here. The page reaches the
 * gateway through a TCP relay, so that a test can cut its connections as a
 * network failure would.
 */

const clientDir = await mkdtemp(join(tmpdir(), 'gateway-client-'))
t.teardown(() => rm(clientDir, { recursive: true, force: true }))
buildClient(clientDir)

// Files the page asked its server for and did not get (the browser's own favicon request
// included, which the page's response events do not show).
const notFound: string[] = []
const site = await startPageServer({ clientDir, onNotFound: path => notFound.push(path) })
t.teardown(() => site.close())
const gateway = await listeningGateway(t, { env: { CORS_ORIGINS: site.origin } })
const proxy = await startTcpProxy(t, (gateway.app.server.address() as { port: number }).port)
const pageGateway = `http://127.0.0.1:${proxy.port}`
const api = createGatewayClient({ baseUrl: gateway.baseUrl, apiKey: gateway.key })
// A browser in UTC, as the page's first users had: the hub's offset is not the browser's.
const browser = await launchChromium({ timezoneId: 'UTC' })
t.teardown(() => browser.dispose())

const page = await browser.newPage()
const pageErrors: string[] = []
const failedFiles: string[] = []
page.on('pageerror', error => pageErrors.push(error.message))
page.on('response', (response) => {
  if (response.url().startsWith(site.origin) && response.status() >= 400) {
    failedFiles.push(`${response.status()} ` + `${response.url()}`)
  }
})
// The page's default offer time is taken between these two moments (whole seconds).
const loadedFrom = Math.floor(Date.now() / 1000) * 1000
await page.goto(`${site.origin}/?gateway=${encodeURIComponent(pageGateway)}`)
const loadedBy = Date.now()

/** The text of each row's cells, in order. */
async function rows (tableName: string, on: Page = page): Promise<string[][]> {
  return await on.getByRole('table', { name: tableName }).locator('tbody tr').evaluateAll(trs =>
    trs.map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent ?? '')))
}

/** Log lines of requests the browser made, by method. */
const requestsLogged = (method: string) =>
  gateway.logs.filter((line) => (line.req as { method?: string } | undefined)?.method === method)
/** The gateway's answers to the page's GETs, in order: path and status. */
const pageCalls: Array<{ path: string, status: number }> = []
page.on('response', response => {
  const url = new URL(response.url())
  if (
    url.origin === pageGateway &&
    response.request().method() === 'GET' &&
    url.pathname.startsWith('/v1/')
  ) { pageCalls.push({ path: url.pathname, status: response.status() }) }
})

async function book (baseUrl: string, key: string, note: string): Promise<void> {
  const { response } = await createGatewayClient({ baseUrl, apiKey: key }).POST(
    '/v1/bookings/{bookingRequestId}/booked',
    { params: { path: { bookingRequestId: F.bookingRequestId } }, body: { booked: true, note } }
  )
  if (response.status !== 200) throw new Error(`booked POST answered ${response.status}`)
}

t.test('connects with the key the person types, and the event socket opens', async (t) => {
  await page.getByLabel('Client key').fill(gateway.key)
  await page.getByRole('button', { name: 'Connect' }).click()
  await page.getByRole('status').filter({ hasText: 'Events: connected' }).waitFor()
  t.pass('Events: connected')
})

t.test(
  'an NPWP lists its BLs of the three document types, with the counts the gateway gives',
  async (t) => {
    const { data } = await api.GET('/v1/taxpayers/{npwp}/bills-of-lading', {
      params: { path: { npwp: F.taxpayer.npwp } }
    })
    const bls = data?.data ?? []
    t.ok(bls.length > 0)
    const count = (type: string) => bls.filter((bl) => bl.documentType === type).length
    t.ok(
      count('bc16') > 0 && count('bc20') > 0 && count('bc23') > 0,
      'the taxpayer has BLs of all three types'
    )

    await page.getByLabel('NPWP').fill('01.234.567.8-901.000')
    await page.getByRole('button', { name: 'Show' }).click()
    const summary = `${bls.length} bills of lading (BC 1.6: ${count('bc16')}, BC 2.0: ` +
      `${count('bc20')}, BC 2.3: ${count('bc23')})`
    await page.getByText(summary).waitFor()
    t.pass(summary)
    t.same(
      (await rows('Bills of lading')).map(([, blNo, blDate]) => [blNo, blDate]),
      bls.map((bl) => [bl.blNo, bl.blDate]),
      "one row per BL, in the gateway's order, with its day"
    )
    t.ok(
      requestsLogged('OPTIONS').length > 0,
      'the browser sent a CORS preflight (Authorization is not a simple header)'
    )
  }
)

t.test(
  'opening a BC 2.0 BL shows its shipment from one call: declarations, containers with their ' +
  'gate passes, SP2 documents',
  async (t) => {
    const { npwp, blNo, blDate } = F.sp2
    const { data } = await api.GET('/v1/shipments/{blNo}', {
      params: { path: { blNo }, query: { npwp, blDate, documentType: 'bc20' } }
    })
    const shipment = data?.data
    if (
      shipment?.declarations == null ||
      shipment.containers == null ||
      shipment.sp2Documents == null
    ) { throw new Error('the sandbox shipment is complete') }
    t.ok(
      shipment.declarations.length > 0 &&
        shipment.containers.length > 0 &&
        shipment.sp2Documents.length > 0
    )
    const before = pageCalls.length

    await page.getByRole('row', { name: blNo }).getByRole('button', { name: 'Open' }).click()
    await page.getByRole('heading', { name: `BC 2.0 ${blNo} of ${blDate}` }).waitFor()
    await page.getByText('Every source answered').waitFor()
    t.same(
      (await rows('BC 2.0 declarations')).map(([pibNo]) => pibNo),
      shipment.declarations.map((d) => d.pibNo)
    )
    const containerRows = await rows('Containers')
    t.same(
      containerRows.map(([containerNo]) => containerNo),
      shipment.containers.map((c) => c.containerNo)
    )
    const gatePass = shipment.sp2Documents
      .flatMap((d) => d.containers ?? [])
      .find((c) => c.containerNo === F.sp2.containerNo)?.gatePass
    t.equal(
      containerRows.find(([containerNo]) => containerNo === F.sp2.containerNo)?.[3],
      gatePass ?? 'none yet',
      "a container's gate pass, from its SP2 document"
    )
    const sp2Rows = await rows('SP2 documents')
    t.same(
      sp2Rows.map(([sp2Id]) => sp2Id),
      shipment.sp2Documents.map((d) => d.sp2Id)
    )
    t.match(sp2Rows[0]?.[3], F.sp2.containerNo, "the first document's containers, by number")
    t.same(
      pageCalls.slice(before),
      [{ path: `/v1/shipments/${blNo}`, status: 200 }],
      'one call for the whole screen'
    )
  }
)

t.test(
  'Refresh asks again with the ETag: unchanged, the gateway answers 304 and the page says so',
  async (t) => {
    const before = pageCalls.length
    await page.getByRole('button', { name: 'Refresh' }).click()
    await page.getByText('the gateway answered 304 Not Modified').waitFor()
    t.same(
      pageCalls.slice(before),
      [{ path: `/v1/shipments/${F.sp2.blNo}`, status: 304 }],
      'a 304 (the page could read the ETag across origins and send it back)'
    )
    t.same((await rows('SP2 documents')).length > 0, true, 'what was shown stays')
  }
)

t.test(
  'a BC 2.3 BL shows its containers; a BC 1.6 BL says there is no container lookup, and what it ' +
  'has none of',
  async (t) => {
    const [bc23] = F.taxpayer.bc23
    const [bc16] = F.taxpayer.bc16
    if (bc23 === undefined || bc16 === undefined) throw new Error('fixture')
    const containers = await api.GET('/v1/customs/bc23/containers', {
      params: { query: { blNo: bc23.blNo, blDate: bc23.blDate } }
    })
    const expected = containers.data?.data.map((c) => c.containerNo) ?? []
    t.ok(expected.length > 0)
    await page.getByRole('row', { name: bc23.blNo }).getByRole('button', { name: 'Open' }).click()
    await page.getByRole('heading', { name: `BC 2.3 ${bc23.blNo} of ${bc23.blDate}` }).waitFor()
    await page
      .getByRole('table', { name: 'Containers' })
      .locator('tbody tr')
      .nth(expected.length - 1)
      .waitFor()
    t.same(
      (await rows('Containers')).map(([containerNo]) => containerNo),
      expected
    )

    await page.getByRole('row', { name: bc16.blNo }).getByRole('button', { name: 'Open' }).click()
    await page.getByText('The hub has no container lookup for BC 1.6.').waitFor()
    t.same(await rows('Containers'), [])
    // Empty parts say so in words, not with an empty table.
    await page.getByText('No SP2 documents for this BL yet.').waitFor()
    await page.getByText('No BC 2.0 declarations for this BL.').waitFor()
    t.pass('empty states in words')
  }
)

t.test('an invalid NPWP shows the field by its label, the rule, the code and the request id; ' +
  'no field path', async (t) => {
  const expected = await api.GET('/v1/taxpayers/{npwp}/bills-of-lading', {
    params: { path: { npwp: '12345' } }
  })
  t.equal(expected.error?.code, 'VALIDATION_FAILED')
  const rule = expected.error?.details?.[0]?.rule ?? '?'
  await page.getByLabel('NPWP').fill('12345')
  await page.getByRole('button', { name: 'Show' }).click()
  const alert = page.locator('#bills-error')
  await alert.waitFor()
  const text = await alert.textContent() ?? ''
  t.ok(text.startsWith(`NPWP ${rule}`), `the label and the rule: ${text}`)
  t.notMatch(text, 'path.npwp', 'no field path')
  const requestId = /\(VALIDATION_FAILED, request id ([\w-]+)\)$/.exec(text)?.[1]
  t.ok(
    requestId !== undefined && requestId !== expected.error?.requestId,
    "the id of the page's own request"
  )
  const line = gateway.logs.find(
    (line) => line.requestId === requestId && line.msg === 'request completed'
  )
  t.equal(
    (line?.res as { statusCode?: number } | undefined)?.statusCode,
    400,
    'which the gateway logged as a 400'
  )
  t.equal(
    await page.getByRole('table', { name: 'Bills of lading' }).isVisible(),
    false,
    'no stale list'
  )
  t.equal(await page.locator('#shipment').isVisible(), false, 'nor a stale shipment')
})

t.test('an offer\'s time is now in the hub\'s time, +07:00, in a browser in UTC', async (t) => {
  const offeredAt = await page.getByLabel('Offered at').inputValue()
  t.match(offeredAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+07:00$/)
  const moment = Date.parse(offeredAt)
  t.ok(moment >= loadedFrom && moment <= loadedBy, `${offeredAt}: when the page loaded`)
})

t.test(
  'an offer posts with its idempotency key, and the key changes for the next one',
  async (t) => {
    const before = gateway.sandbox.count('DetilBooking')
    const key = await page.getByLabel('Idempotency-Key').inputValue()
    t.match(key, /^[0-9a-f-]{32,36}$/)
    await page.getByRole('button', { name: 'Send offer' }).click()
    const result = page.locator('#offer-result').filter({ hasText: 'Offer sent' })
    await result.waitFor()
    const text = (await result.textContent()) ?? ''
    t.ok(text.endsWith(`Idempotency-Key ${key}`), text)
    t.equal(gateway.sandbox.count('DetilBooking') - before, 1, 'the hub got the offer')
    const requestId = /request id ([\w-]+),/.exec(text)?.[1]
    const audit = gateway.logs.find((line) => line.audit === true && line.requestId === requestId)
    t.match(audit, {
      operation: 'DetilBooking',
      bookingRequestId: F.bookingRequestId,
      statusCode: 200,
      replayed: false
    })
    t.not(await page.getByLabel('Idempotency-Key').inputValue(), key)
  }
)

t.test('an invalid offer names its fields by their labels', async (t) => {
  await page.getByLabel('Offered at').fill('tomorrow')
  await page.getByRole('button', { name: 'Send offer' }).click()
  const alert = page.locator('#offer-error')
  await alert.waitFor()
  t.match(await alert.textContent(), /^Offered at /)
  t.notMatch(await alert.textContent(), 'body.offeredAt')
})

t.test('a booked event posted through the API appears on the page', async (t) => {
  const note = `Truck B ${Date.now() % 10000} XYZ`
  await book(gateway.baseUrl, gateway.key, note)
  await page
    .getByRole('list', { name: 'Booked events' })
    .getByText(`${F.bookingRequestId} booked: ${note}`)
    .waitFor()
  await page.getByText('1 received').waitFor()
  t.pass('shown')
})

t.test(
  "a booked event sent while the page's socket is closed appears once it reconnects, once, " +
  'marked as caught up',
  async (t) => {
    const note = `Truck C ${Date.now() % 10000} while away`
    proxy.hold()
    proxy.cut()
    await page.getByRole('status').filter({ hasText: 'Events: The event socket closed' }).waitFor()
    // Its reconnection waits at the relay: the event is sent while the page has no socket.
    await book(gateway.baseUrl, gateway.key, note)
    const list = page.getByRole('list', { name: 'Booked events' })
    t.equal(await list.getByText(note).count(), 0, 'not shown while disconnected')
    proxy.release()
    const item = list.locator('li', { hasText: note })
    await item.waitFor()
    t.match(await item.textContent(), '(sent while disconnected, caught up on reconnect)')
    await page
      .getByRole('status')
      .filter({ hasText: 'resumed after the last event seen: nothing missed' })
      .waitFor()
    await page.getByText('2 received').waitFor()
    t.equal(await item.count(), 1, 'once')
  }
)

t.test(
  'from an origin not in CORS_ORIGINS the browser refuses, and the page says why',
  async (t) => {
    const stranger = await startPageServer({ clientDir })
    t.teardown(() => stranger.close())
    const other = await browser.newPage()
    t.teardown(() => other.close())
    await other.goto(`${stranger.origin}/?gateway=${encodeURIComponent(gateway.baseUrl)}`)
    await other.getByLabel('Client key').fill(gateway.key)
    await other.getByLabel('NPWP').fill(F.taxpayer.npwp)
    await other.getByRole('button', { name: 'Show' }).click()
    const alert = other.locator('#bills-error')
    await alert.waitFor()
    t.match(await alert.textContent(), `Could not reach the gateway at ${gateway.baseUrl}`)
    t.match(await alert.textContent(), `is ${stranger.origin} in its CORS_ORIGINS?`)
  }
)

t.test(
  'Redis mode: the replica the page is connected to restarts while the other takes a booked ' +
  'POST; the page shows the event',
  async (t) => {
    const redis = await startRedisServer(t)
    const key = newClientKey()
    const env = { CORS_ORIGINS: site.origin, REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'cgw-web:' }
    const a = await listeningGateway(t, { env, key })
    const b = await listeningGateway(t, { env, key })
    const aPort = (a.app.server.address() as { port: number }).port
    const replicaPage = await browser.newPage()
    t.teardown(() => replicaPage.close())
    replicaPage.on('pageerror', (error) => pageErrors.push(error.message))
    await replicaPage.goto(`${site.origin}/?gateway=${encodeURIComponent(a.baseUrl)}`)
    await replicaPage.getByLabel('Client key').fill(key)
    await replicaPage.getByRole('button', { name: 'Connect' }).click()
    await replicaPage.getByRole('status').filter({ hasText: 'Events: connected' }).waitFor()
    await book(b.baseUrl, key, 'before, on B')
    const list = replicaPage.getByRole('list', { name: 'Booked events' })
    await list.getByText('before, on B').waitFor()

    await a.app.close()
    await replicaPage.getByRole('status').filter({ hasText: 'Events: The event socket' }).waitFor()
    await book(b.baseUrl, key, 'while A restarts, on B')
    await listeningGateway(t, { env, key, port: aPort })
    const item = list.locator('li', { hasText: 'while A restarts, on B' })
    await item.waitFor()
    t.match(await item.textContent(), '(sent while disconnected, caught up on reconnect)')
    await replicaPage.getByRole('status').filter({ hasText: 'nothing missed' }).waitFor()
    await book(b.baseUrl, key, 'after, on B')
    await list.getByText('after, on B').waitFor()
    t.same(
      await list
        .locator('li')
        .evaluateAll((items) => items.map((li) => li.firstChild?.textContent))
        .then((texts) => texts.reverse()),
      ['before, on B', 'while A restarts, on B', 'after, on B'].map(
        (note) => `${F.bookingRequestId} booked: ${note}`
      ),
      'each once, in order'
    )
  }
)

t.test('the pages loaded all their files and threw nothing', async (t) => {
  t.same(failedFiles, [])
  t.same(notFound, [], 'nothing the page server lacks was asked for, a favicon included')
  t.same(pageErrors, [])
  const png = await page.screenshot({ fullPage: true })
  t.same([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'it renders (a PNG screenshot)')
})
