import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { createGatewayClient } from '../../clients/typescript/src/index.ts'
import { startPageServer } from '../../examples/web/page-server.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { buildClient } from './build-client.ts'
import { launchChromium } from './chromium.ts'
import { listeningGateway } from './gateway.ts'

/**
 * examples/web in a real browser, driven like a person would: the page on
 * one origin, the gateway (on the sandbox, authentication on) on another,
 * with CORS_ORIGINS listing the page. Expected values are asked of the
 * gateway through the client, not written down here.
 */

const clientDir = await mkdtemp(join(tmpdir(), 'gateway-client-'))
t.teardown(() => rm(clientDir, { recursive: true, force: true }))
buildClient(clientDir)

const site = await startPageServer({ clientDir })
t.teardown(() => site.close())
const gateway = await listeningGateway(t, { env: { CORS_ORIGINS: site.origin } })
const api = createGatewayClient({ baseUrl: gateway.baseUrl, apiKey: gateway.key })
const browser = await launchChromium()
t.teardown(() => browser.dispose())

const page = await browser.newPage()
const pageErrors: string[] = []
const failedFiles: string[] = []
page.on('pageerror', error => pageErrors.push(error.message))
page.on('response', response => { if (response.url().startsWith(site.origin) && response.status() >= 400) failedFiles.push(`${response.status()} ${response.url()}`) })
await page.goto(`${site.origin}/?gateway=${encodeURIComponent(gateway.baseUrl)}`)

/** The text of each row's cells, in order. */
async function rows (tableName: string): Promise<string[][]> {
  return await page.getByRole('table', { name: tableName }).locator('tbody tr').evaluateAll(trs =>
    trs.map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent ?? '')))
}

/** Log lines of requests the browser made, by method. */
const requestsLogged = (method: string) => gateway.logs.filter(line => (line.req as { method?: string } | undefined)?.method === method)

t.test('connects with the key the person types, and the event socket opens', async (t) => {
  await page.getByLabel('Client key').fill(gateway.key)
  await page.getByRole('button', { name: 'Connect' }).click()
  await page.getByRole('status').filter({ hasText: 'Events: connected' }).waitFor()
  t.pass('Events: connected')
})

t.test('an NPWP lists its BLs of the three document types, with the counts the gateway gives', async (t) => {
  const { data } = await api.GET('/v1/taxpayers/{npwp}/bills-of-lading', { params: { path: { npwp: F.taxpayer.npwp } } })
  const bls = data?.data ?? []
  t.ok(bls.length > 0)
  const count = (type: string) => bls.filter(bl => bl.documentType === type).length
  t.ok(count('bc16') > 0 && count('bc20') > 0 && count('bc23') > 0, 'the taxpayer has BLs of all three types')

  await page.getByLabel('NPWP').fill('01.234.567.8-901.000')
  await page.getByRole('button', { name: 'Show' }).click()
  const summary = `${bls.length} bills of lading (BC 1.6: ${count('bc16')}, BC 2.0: ${count('bc20')}, BC 2.3: ${count('bc23')})`
  await page.getByText(summary).waitFor()
  t.pass(summary)
  t.same((await rows('Bills of lading')).map(([, blNo]) => blNo), bls.map(bl => bl.blNo), 'one row per BL, in the gateway\'s order')
  t.ok(requestsLogged('OPTIONS').length > 0, 'the browser sent a CORS preflight (Authorization is not a simple header)')
})

t.test('opening a BC 2.0 BL shows its containers and SP2 documents', async (t) => {
  const { npwp, blNo, blDate } = F.sp2
  const containers = await api.GET('/v1/customs/bc20/containers', { params: { query: { blDate } } })
  const expected = containers.data?.data.filter(c => c.blNo === blNo).map(c => c.containerNo) ?? []
  const documents = await api.GET('/v1/sp2/documents', { params: { query: { npwp, blNo, blDate } } })
  const sp2Ids = documents.data?.data.map(d => d.sp2Id) ?? []
  t.ok(expected.length > 0 && sp2Ids.length > 0)

  await page.getByRole('row', { name: blNo }).getByRole('button', { name: 'Open' }).click()
  await page.getByRole('heading', { name: `BC 2.0 ${blNo} of ${blDate}` }).waitFor()
  await page.getByRole('table', { name: 'SP2 documents' }).locator('tbody tr').nth(sp2Ids.length - 1).waitFor()
  t.same((await rows('Containers')).map(([containerNo]) => containerNo), expected)
  const sp2Rows = await rows('SP2 documents')
  t.same(sp2Rows.map(([sp2Id]) => sp2Id), sp2Ids)
  t.match(sp2Rows[0]?.[2], F.sp2.containerNo, 'the first document\'s containers, by number')
})

t.test('opening a BC 2.3 BL shows its containers; BC 1.6 has no container lookup', async (t) => {
  const [bc23] = F.taxpayer.bc23
  const [bc16] = F.taxpayer.bc16
  if (bc23 === undefined || bc16 === undefined) throw new Error('fixture')
  const containers = await api.GET('/v1/customs/bc23/containers', { params: { query: { blNo: bc23.blNo, blDate: bc23.blDate } } })
  const expected = containers.data?.data.map(c => c.containerNo) ?? []
  t.ok(expected.length > 0)
  await page.getByRole('row', { name: bc23.blNo }).getByRole('button', { name: 'Open' }).click()
  await page.getByRole('table', { name: 'Containers' }).locator('tbody tr').nth(expected.length - 1).waitFor()
  t.same((await rows('Containers')).map(([containerNo]) => containerNo), expected)

  await page.getByRole('row', { name: bc16.blNo }).getByRole('button', { name: 'Open' }).click()
  await page.getByText('The hub has no container lookup for BC 1.6.').waitFor()
  t.same(await rows('Containers'), [])
})

t.test('an invalid NPWP shows the gateway\'s validation message and the request id', async (t) => {
  const expected = await api.GET('/v1/taxpayers/{npwp}/bills-of-lading', { params: { path: { npwp: '12345' } } })
  t.equal(expected.error?.code, 'VALIDATION_FAILED')
  await page.getByLabel('NPWP').fill('12345')
  await page.getByRole('button', { name: 'Show' }).click()
  const alert = page.locator('#bills-error')
  await alert.waitFor()
  const text = await alert.textContent() ?? ''
  t.ok(text.startsWith(expected.error?.message ?? '?'), `the gateway's message: ${text}`)
  const requestId = /request id ([\w-]+)\)$/.exec(text)?.[1]
  t.ok(requestId !== undefined && requestId !== expected.error?.requestId, 'the id of the page\'s own request')
  const completed = gateway.logs.find(line => line.requestId === requestId && line.msg === 'request completed')
  t.equal((completed?.res as { statusCode?: number } | undefined)?.statusCode, 400, 'which the gateway logged as a 400')
  t.equal(await page.getByRole('table', { name: 'Bills of lading' }).isVisible(), false, 'no stale list')
})

t.test('an offer posts with its idempotency key, and the key changes for the next one', async (t) => {
  const before = gateway.sandbox.count('DetilBooking')
  const key = await page.getByLabel('Idempotency-Key').inputValue()
  t.match(key, /^[0-9a-f-]{32,36}$/)
  await page.getByRole('button', { name: 'Send offer' }).click()
  const result = page.locator('#offer-result').filter({ hasText: 'Offer sent' })
  await result.waitFor()
  const text = await result.textContent() ?? ''
  t.ok(text.endsWith(`Idempotency-Key ${key}`), text)
  t.equal(gateway.sandbox.count('DetilBooking') - before, 1, 'the hub got the offer')
  const requestId = /request id ([\w-]+),/.exec(text)?.[1]
  const audit = gateway.logs.find(line => line.audit === true && line.requestId === requestId)
  t.match(audit, { operation: 'DetilBooking', bookingRequestId: F.bookingRequestId, statusCode: 200, replayed: false })
  t.not(await page.getByLabel('Idempotency-Key').inputValue(), key)
})

t.test('a booked event posted through the API appears on the page', async (t) => {
  const note = `Truck B ${Date.now() % 10000} XYZ`
  const booked = await api.POST('/v1/bookings/{bookingRequestId}/booked', {
    params: { path: { bookingRequestId: F.bookingRequestId } },
    body: { booked: true, note }
  })
  t.equal(booked.response.status, 200)
  await page.getByRole('list', { name: 'Booked events' }).getByText(`${F.bookingRequestId} booked: ${note}`).waitFor()
  await page.getByText('1 received').waitFor()
  t.pass('shown')
})

t.test('from an origin not in CORS_ORIGINS the browser refuses, and the page says why', async (t) => {
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
})

t.test('the page loaded all its files and threw nothing', async (t) => {
  t.same(failedFiles, [])
  t.same(pageErrors, [])
  const png = await page.screenshot({ fullPage: true })
  t.same([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'it renders (a PNG screenshot)')
})
