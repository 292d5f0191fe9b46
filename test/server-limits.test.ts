import { spawn } from 'node:child_process'
import { connect, type Socket } from 'node:net'
import { createInterface } from 'node:readline'
import { test } from 'tap'

/**
 * The real process (dist/main.js as npm start runs it; tap's before step builds it) on the
 * sandbox, with its connection limits set small.
 */
async function startServer (t: { teardown (fn: () => unknown): void }, env: Record<string, string>): Promise<{ host: string, port: number }> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  // What the process says on stderr, for the failure when it ends early.
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  for await (const line of createInterface({ input: child.stdout })) {
    const address = /listening at http:\/\/([^ :]+):(\d+)/.exec(String((JSON.parse(line) as { msg?: string }).msg))
    if (address !== null) return { host: address[1]!, port: Number(address[2]) }
  }
  throw new Error(`the server did not start: ${stderr.slice(-2000)}`)
}

function open (address: { host: string, port: number }): Promise<Socket> {
  const socket = connect(address.port, address.host)
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket))
    socket.once('error', reject)
  })
}

/**
 * The bounds of these tests: what the server does at once or after 1 s is done well within
 * BOUND_MS however busy the machine; what it should not do (wait for a 60 s timeout) is not.
 */
const BOUND_MS = 30_000
const LATER_MS = '60000'

/** What the server sent on this socket until it closed it, and when (ms after `from`). */
function untilClosed (socket: Socket, from: number): Promise<{ text: string, ms: number }> {
  let text = ''
  socket.on('data', (chunk: Buffer) => { text += chunk.toString() })
  socket.on('error', () => {})
  return new Promise(resolve => {
    const timer = setTimeout(() => { resolve({ text, ms: Infinity }); socket.destroy() }, 45_000)
    socket.once('close', () => { clearTimeout(timer); resolve({ text, ms: Date.now() - from }) })
  })
}

test('a client sending its headers slowly is cut off after SERVER_HEADERS_TIMEOUT_MS', async (t) => {
  const address = await startServer(t, {
    SERVER_HEADERS_TIMEOUT_MS: '1000', SERVER_REQUEST_TIMEOUT_MS: LATER_MS
  })
  const socket = await open(address)
  const started = Date.now()
  const closed = untilClosed(socket, started)
  socket.write('GET /health/live HTTP/1.1\r\nHost: gateway\r\n')
  // One header line every 200 ms, never the end of the headers.
  const drip = setInterval(() => { if (!socket.destroyed) socket.write(`X-Drip-${Date.now()}: 1\r\n`) }, 200)
  const { text, ms } = await closed
  clearInterval(drip)
  t.match(text, /^HTTP\/1\.1 408 /, 'answered 408 Request Timeout')
  // Not before 1 s; and by the headers timeout, not by the request timeout of 60 s.
  t.ok(ms >= 900 && ms < BOUND_MS, `closed after ${ms} ms (the timeout: 1 s, checked every second)`)

  // A well-behaved client meanwhile is served, and told the keep-alive timeout.
  const normal = await open(address)
  const answered = untilClosed(normal, Date.now())
  normal.end('GET /health/live HTTP/1.1\r\nHost: gateway\r\nConnection: keep-alive\r\n\r\n')
  const { text: reply } = await answered
  t.match(reply, /^HTTP\/1\.1 200 /)
  t.match(reply, /\r\nKeep-Alive: timeout=72\r\n/i, 'keep-alive above a 60 s load balancer idle timeout')
})

test('past SERVER_MAX_CONNECTIONS a new connection is closed at once; a freed place is taken again', async (t) => {
  // Any timeout that could close the extra connection later is 60 s.
  const address = await startServer(t, {
    SERVER_MAX_CONNECTIONS: '3',
    SERVER_HEADERS_TIMEOUT_MS: LATER_MS,
    SERVER_REQUEST_TIMEOUT_MS: LATER_MS
  })
  const held = await Promise.all([open(address), open(address), open(address)])
  t.teardown(() => { for (const s of held) s.destroy() })
  await new Promise(resolve => setTimeout(resolve, 100))
  const extra = await open(address)
  const started = Date.now()
  extra.write('GET /health/live HTTP/1.1\r\nHost: gateway\r\n\r\n')
  const { text, ms } = await untilClosed(extra, started)
  t.equal(text, '', 'no answer: the socket is closed')
  t.ok(ms < BOUND_MS, `closed at once (${ms} ms), not by a timeout`)

  held.pop()!.destroy()
  // The server counts the freed place once it has seen the close, which a busy machine delays:
  // a connection refused until then is tried again.
  let reply = ''
  for (let attempt = 1; attempt <= 100 && reply === ''; attempt++) {
    await new Promise(resolve => setTimeout(resolve, 100))
    const next = await open(address)
    const answered = untilClosed(next, Date.now())
    next.end('GET /health/live HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n')
    reply = (await answered).text
  }
  t.match(reply, /^HTTP\/1\.1 200 /)
})

test('the headers timeout may not exceed the request timeout', async (t) => {
  const { ConfigError, loadConfig } = await import('../src/config/load.ts')
  let problems: string[] = []
  try {
    loadConfig({ SERVER_HEADERS_TIMEOUT_MS: '40000', SERVER_REQUEST_TIMEOUT_MS: '30000' })
  } catch (error) {
    if (error instanceof ConfigError) problems = error.problems
  }
  t.same(problems, ['SERVER_HEADERS_TIMEOUT_MS: must be at most SERVER_REQUEST_TIMEOUT_MS (30000)'])
  const config = loadConfig({})
  t.same([config.SERVER_MAX_CONNECTIONS, config.SERVER_HEADERS_TIMEOUT_MS, config.SERVER_REQUEST_TIMEOUT_MS, config.SERVER_KEEP_ALIVE_TIMEOUT_MS], [10_000, 10_000, 30_000, 72_000])
})
