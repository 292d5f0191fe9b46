import { spawnSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { createGatewayClient } from '../clients/typescript/src/index.ts'
import { startPageServer } from '../examples/web/page-server.ts'
import { buildApp } from '../src/app.ts'
import { resolveConfig } from '../src/config/resolve.ts'
import { sandboxEnv } from '../src/sandbox/index.ts'
import { SANDBOX_FIXTURES as F, startSandbox } from '../src/sandbox/index.ts'
import { launchChromium } from '../test/client/chromium.ts'

/**
 * `tsx scripts/example-screenshot.ts`: the picture of examples/web in docs/api.md,
 * docs/images/example-web.png, taken as `npm run example` serves the page
 * (gateway on the sandbox, no CLIENTS_FILE) after a person looked up a
 * taxpayer, opened a BL's shipment (one call), refreshed it (a 304), sent an
 * offer and saw two booked events arrive.
 */
const ROOT = new URL('../', import.meta.url)
const OUT = new URL('docs/images/example-web.png', ROOT)

if (spawnSync('npm', ['run', 'build:client'], { cwd: ROOT, stdio: 'inherit' }).status !== 0) {
  process.exit(1)
}
const site = await startPageServer()
const sandbox = await startSandbox()
const config = resolveConfig({
  ...sandboxEnv(sandbox.url),
  LOG_LEVEL: 'silent',
  CORS_ORIGINS: site.origin
})
const app = await buildApp({ config, sandbox: true }, false)
// Port 3000, as `npm run example` shows it, when it is free.
await app
  .listen({ host: '127.0.0.1', port: 3000 })
  .catch(async () => await app.listen({ host: '127.0.0.1', port: 0 }))
const { port } = app.server.address() as { port: number }
const baseUrl = `http://127.0.0.1:${port}`
const browser = await launchChromium({ timezoneId: 'Asia/Jakarta', locale: 'en-GB' })
try {
  const page = await browser.newPage()
  await page.goto(`${site.origin}/?gateway=${encodeURIComponent(baseUrl)}`)
  await page.getByRole('status').filter({ hasText: 'Events: connected' }).waitFor()
  await page.getByLabel('NPWP').fill('01.234.567.8-901.000')
  await page.getByRole('button', { name: 'Show' }).click()
  await page.getByRole('row', { name: F.sp2.blNo }).getByRole('button', { name: 'Open' }).click()
  await page.getByText('Every source answered').waitFor()
  await page.getByRole('button', { name: 'Refresh' }).click()
  await page.getByText('the gateway answered 304 Not Modified').waitFor()
  await page.getByRole('button', { name: 'Send offer' }).click()
  await page.locator('#offer-result').filter({ hasText: 'Offer sent' }).waitFor()
  const api = createGatewayClient({ baseUrl })
  for (const [bookingRequestId, note] of [
    ['BKG-20240301-0001', 'Truck B 1234 XYZ, pickup 08:00'],
    ['BKG-20240305-0017', 'Truck L 9876 AB, pickup 13:30']
  ] as const) {
    await api.POST('/v1/bookings/{bookingRequestId}/booked', {
      params: { path: { bookingRequestId } },
      body: { booked: true, note }
    })
  }
  await page.getByText('2 received').waitFor()
  await mkdir(new URL('./', OUT), { recursive: true })
  await writeFile(OUT, await page.screenshot({ fullPage: true }))
  process.stdout.write(`wrote ${fileURLToPath(OUT)}\n`)
} finally {
  await browser.dispose()
  await app.close()
  await sandbox.close()
  await site.close()
}
