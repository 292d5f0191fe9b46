// `npm run sandbox`: the sandbox hub as a standalone process. The one place
// in the sandbox that reads process.env.
import { parseArgs } from 'node:util'
import { DEFAULT_API_KEY_HEADER, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from './constants.ts'
import { ProfileError } from './profile-file.ts'
import { requestLogLine } from './request-log.ts'
import { startSandbox } from './server.ts'

function numberFrom (name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
    process.exit(1)
  }
  return value
}

// `npm run sandbox -- --profile deploy/profiles/public-callers.json` or SANDBOX_PROFILE=…
const { values: flags } = parseArgs({ options: { profile: { type: 'string' } }, strict: true })
const profile = flags.profile ?? (process.env.SANDBOX_PROFILE?.trim() === '' ? undefined : process.env.SANDBOX_PROFILE)

const sandbox = await startSandbox({
  host: process.env.SANDBOX_HOST ?? '127.0.0.1',
  port: numberFrom('SANDBOX_PORT', 4010),
  latencyMs: numberFrom('SANDBOX_LATENCY_MS', 0),
  jitterMs: numberFrom('SANDBOX_JITTER_MS', 0),
  // Short lifetimes let a gateway's renewal and refresh be watched in minutes.
  loginTokenTtlMs: numberFrom('SANDBOX_LOGIN_TOKEN_TTL_MS', 300_000),
  refreshTokenTtlMs: numberFrom('SANDBOX_REFRESH_TOKEN_TTL_MS', 86_400_000),
  // One line per request on stdout, so that hub calls can be watched and counted.
  onRequest: (entry) => { console.log(requestLogLine(entry)) },
  ...(profile === undefined ? {} : { profile })
}).catch((error: unknown) => {
  if (!(error instanceof ProfileError)) throw error
  for (const problem of error.problems) console.error(`config error: SANDBOX_PROFILE (${profile ?? ''}) ${problem}`)
  process.exit(1)
})

console.log(sandbox.profile === undefined
  ? `sandbox hub listening on ${sandbox.url} | ${DEFAULT_API_KEY_HEADER}: ${SANDBOX_API_KEY} | Authorization: ${SANDBOX_ACCESS_TOKEN} | platform id: ${SANDBOX_PLATFORM_ID}`
  : `sandbox hub playing the profile ${sandbox.profile} listening on ${sandbox.url} | API key (under the profile's header names): ${SANDBOX_API_KEY} | token (in the profile's token header): ${SANDBOX_ACCESS_TOKEN} | platform id: ${SANDBOX_PLATFORM_ID}`)

const stop = (): void => {
  sandbox.close().then(() => process.exit(0), () => process.exit(1))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
