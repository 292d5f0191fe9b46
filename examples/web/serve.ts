import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { startPageServer } from './page-server.ts'
import { choosePort, PortTakenError, type PortChoice } from './ports.ts'

/**
 * `npm run example`: the page, and the gateway on its built-in sandbox hub,
 * on loopback, with CORS_ORIGINS set to the page's origin; the page on
 * another port (so every call is cross-origin, with the browser's real
 * preflights).
 *
 *   npm run example -- --port 8080 --gateway-port 3000
 *   npm run example -- --gateway https://customs-gateway.example.internal
 *
 * The defaults (8080 for the page, 3000 for the gateway) give way to a free
 * port when taken, and say so; a port asked for that is taken stops it with
 * a sentence saying which. With --gateway, no gateway is started: only the
 * page is served, pointed at that gateway (whose CORS_ORIGINS must list the
 * page's origin); the client key is typed into the page.
 */
const HOST = '127.0.0.1'
/** The gateway this command started, if it did. */
let gateway: ReturnType<typeof spawn> | undefined
const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    'gateway-port': { type: 'string' },
    gateway: { type: 'string' }
  }
})

function portOption (name: 'port' | 'gateway-port', fallback: number): { wanted: number, explicit: boolean } {
  const text = values[name]
  if (text === undefined) return { wanted: fallback, explicit: false }
  const wanted = Number(text)
  if (!Number.isInteger(wanted) || wanted < 0 || wanted > 65535) fail(`--${name} ${text} is not a port: give a number from 0 (any free port) to 65535`)
  return { wanted, explicit: true }
}

function fail (sentence: string): never {
  process.stderr.write(`npm run example: ${sentence}\n`)
  gateway?.removeAllListeners('exit')
  gateway?.kill('SIGTERM')
  process.exit(1)
}

async function chosen (name: 'port' | 'gateway-port', fallback: number, what: string): Promise<PortChoice> {
  try {
    return await choosePort({ ...portOption(name, fallback), host: HOST, what, option: `--${name}` })
  } catch (error) {
    if (error instanceof PortTakenError) fail(error.message)
    throw error
  }
}

const pagePort = await chosen('port', 8080, 'the page')
const gatewayPort = values.gateway === undefined ? await chosen('gateway-port', 3000, 'the gateway') : undefined
const page = await startPageServer({
  host: HOST,
  port: pagePort.port,
  onNotFound: (path) => { process.stderr.write(`example page: no file at ${path} (404)\n`) }
})
const origins = [page.origin, page.origin.replace(HOST, 'localhost')].join(',')
for (const note of [pagePort.note, gatewayPort?.note]) if (note !== undefined) process.stdout.write(`note: ${note}\n`)

let gatewayUrl = values.gateway
if (gatewayUrl === undefined) {
  gatewayUrl = `http://${HOST}:${gatewayPort!.port}`
  process.stdout.write(`starting the gateway on ${gatewayUrl} (its built-in sandbox hub; no client keys needed)…\n`)
  gateway = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), 'src/main.ts'], {
    cwd: new URL('../../', import.meta.url),
    env: { ...process.env, PORT: String(gatewayPort!.port), HOST, CORS_ORIGINS: origins },
    stdio: 'inherit'
  })
  gateway.once('exit', async (code) => {
    process.stderr.write(`npm run example: the gateway it started exited (code ${code}); stopping\n`)
    await page.close()
    process.exit(code ?? 1)
  })
  await waitForGateway(gatewayUrl)
}

process.stdout.write(`\nexample page: ${page.origin}/?gateway=${encodeURIComponent(gatewayUrl)}\n` +
  (gateway === undefined
    ? `gateway: not started by this command; the page calls ${gatewayUrl}, whose CORS_ORIGINS must list ${page.origin}\n`
    : `gateway: started by this command on ${gatewayUrl}, on its built-in sandbox hub (CORS_ORIGINS=${origins}); it stops with this command\n`) +
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
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health/live`)).ok) return
    } catch {}
    await new Promise(resolve => setTimeout(resolve, 200))
  }
  fail(`the gateway it started did not answer at ${url} within 60 s`)
}
