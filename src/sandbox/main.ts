// `npm run sandbox`: the sandbox hub as a standalone process. The one place
// in the sandbox that reads process.env.
import { DEFAULT_API_KEY_HEADER, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from './constants.ts'
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

const sandbox = await startSandbox({
  host: process.env.SANDBOX_HOST ?? '127.0.0.1',
  port: numberFrom('SANDBOX_PORT', 4010),
  latencyMs: numberFrom('SANDBOX_LATENCY_MS', 0),
  jitterMs: numberFrom('SANDBOX_JITTER_MS', 0),
  // One line per request on stdout, so that hub calls can be watched and counted.
  onRequest: (entry) => { console.log(requestLogLine(entry)) }
})

console.log(`sandbox hub listening on ${sandbox.url} | ${DEFAULT_API_KEY_HEADER}: ${SANDBOX_API_KEY} | Authorization: ${SANDBOX_ACCESS_TOKEN} | platform id: ${SANDBOX_PLATFORM_ID}`)

const stop = (): void => {
  sandbox.close().then(() => process.exit(0), () => process.exit(1))
}
process.once('SIGINT', stop)
process.once('SIGTERM', stop)
