import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { startPageServer } from './page-server.ts'

/**
 * `npm run example`: the gateway on its built-in sandbox, on loopback, with
 * CORS_ORIGINS set to the page's origin, and the page on another port (so
 * every call is cross-origin, with the browser's real preflights).
 *
 *   npm run example -- --port 8080 --gateway-port 3000
 *   npm run example -- --gateway https://customs-gateway.example.internal
 *
 * With --gateway, only the page is served, pointed at that gateway (whose
 * CORS_ORIGINS must list the page's origin); the client key is typed into the page.
 */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8080' },
    'gateway-port': { type: 'string', default: '3000' },
    gateway: { type: 'string' }
  }
})

const page = await startPageServer({ port: Number(values.port) })
const origins = [page.origin, page.origin.replace('127.0.0.1', 'localhost')].join(',')
let gatewayUrl = values.gateway
let gateway: ReturnType<typeof spawn> | undefined

if (gatewayUrl === undefined) {
  gatewayUrl = `http://127.0.0.1:${values['gateway-port']}`
  gateway = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), 'src/main.ts'], {
    cwd: new URL('../../', import.meta.url),
    env: { ...process.env, PORT: values['gateway-port'], HOST: '127.0.0.1', CORS_ORIGINS: origins },
    stdio: 'inherit'
  })
  gateway.once('exit', async (code) => {
    process.stderr.write(`the gateway exited (code ${code})\n`)
    await page.close()
    process.exit(code ?? 1)
  })
  await waitForGateway(gatewayUrl)
}

process.stdout.write(`\nexample page: ${page.origin}/?gateway=${encodeURIComponent(gatewayUrl)}\n` +
  (gateway === undefined ? `(the gateway's CORS_ORIGINS must list ${page.origin})\n` : `gateway: ${gatewayUrl} (sandbox; CORS_ORIGINS=${origins})\n`) +
  'Ctrl-C stops\n\n')

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  // Ctrl-C reaches the gateway too (same process group); either way it is told to close.
  process.once(signal, async () => {
    gateway?.removeAllListeners('exit')
    if (gateway !== undefined && gateway.exitCode === null && gateway.signalCode === null) {
      gateway.kill('SIGTERM')
      await once(gateway, 'exit')
    }
    await page.close()
    process.exit(0)
  })
}

async function waitForGateway (url: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health/live`)).ok) return
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  throw new Error(`the gateway did not answer at ${url} within 30 s`)
}
