import { access, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM = '/usr/bin/chromium'

/** Quiet, self-contained, and nothing of the machine's own profile. */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync'
]

/**
 * Headless Chromium with a fresh profile directory, removed afterwards. A
 * missing browser is an error, not a skip: CI installs it.
 */
export async function launchChromium (
  options: { timezoneId?: string; locale?: string } = {}
): Promise<BrowserContext & { dispose(): Promise<void> }> {
  await access(CHROMIUM).catch(() => {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`)
  })
  const profile = await mkdtemp(join(tmpdir(), 'chromium-profile-'))
  const context = await chromium.launchPersistentContext(profile, {
    ...options,
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 }
  })
  // A guard against "never" (a text that does not come, an element that is not there), not a
  // judgement of the page's speed: beside other work on two cores, a step can take seconds.
  context.setDefaultTimeout(60_000)
  return Object.assign(context, {
    async dispose () {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    }
  })
}
