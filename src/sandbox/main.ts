// `npm run sandbox`: the sandbox hub as a standalone process. The one place
// in the sandbox that reads process.env.
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { sandboxEnv } from './gateway-env.ts'
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
const profile =
  flags.profile ??
  (process.env.SANDBOX_PROFILE?.trim() === '' ? undefined : process.env.SANDBOX_PROFILE)

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
  for (const problem of error.problems) {
    console.error('config error: SANDBOX_PROFILE ' +
    `(${profile ?? ''}) ${problem}`)
  }
  process.exit(1)
})

// What a gateway needs to use this sandbox, as lines for its .env, after a first line that
// says where it listens. Only addresses, secrets and the platform id: the hub's shape is
// the profile's, the same file for both sides when the sandbox plays one.
const env = sandboxEnv(sandbox.url)
const settings = {
  UPSTREAM_HUB_URL: env.UPSTREAM_HUB_URL,
  UPSTREAM_BASE_URL: env.UPSTREAM_BASE_URL,
  UPSTREAM_API_KEY: env.UPSTREAM_API_KEY,
  UPSTREAM_ACCESS_TOKEN: env.UPSTREAM_ACCESS_TOKEN,
  PLATFORM_ID: env.PLATFORM_ID,
  ...(profile === undefined ? {} : { UPSTREAM_PROFILE_FILE: resolve(profile) })
}
console.log([
  `sandbox hub ${sandbox.profile === undefined ? '' : `playing the profile ${sandbox.profile} `}` +
    `listening on ${sandbox.url} - a gateway uses it with these settings (lines for its .env):`,
  ...Object.entries(settings).map(([name, value]) => `${name}=${value}`)
].join('\n'))

const stop = (): void => {
  sandbox.close().then(() => process.exit(0), () => process.exit(1))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
