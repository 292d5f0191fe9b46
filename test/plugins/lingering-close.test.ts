import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { Agent, fetch } from 'undici'
import type { IncomingMessage } from 'node:http'
import { KEEP_BYTES, KEEP_MS, LINGER_BYTES, LINGER_MS } from '../../src/plugins/lingering-close.ts'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { localHaproxyConfig, parseHaproxy } from '../helpers/haproxy.ts'
import { build, writeClientsFile, type Built } from '../helpers/helper.ts'
import { freePort } from '../helpers/free-port.ts'

/**
 * An answer sent before the request body was read (413, 415, 401, ...) is
 * read by the caller: the gateway reads and drops the rest of the body
 * instead of closing with it unread (a TCP reset, which made the caller's
 * kernel drop the answer). src/plugins/lingering-close.ts.
 */

interface TestLike { teardown (fn: () => unknown): void }

const BOOKED = `/v1/bookings/${F.bookingRequestId}/booked`
/** A 5 MB JSON body: far past the 64 KiB body limit. */
const FIVE_MB = Buffer.concat([
  Buffer.from('{"booked":true,"note":"'),
  Buffer.alloc(5 * 1024 * 1024, 'a'),
  Buffer.from('"}')
])

/**
 * The real process (dist/main.js, as npm start runs it; tap's before step builds it from src/),
 * with its own timeouts, on the sandbox, in a process of its own: with the caller in the same
 * process as the server the reset never raced the answer, and the defect did not show.
 */
async function startServer (
  t: TestLike,
  env: Record<string, string> = {}
): Promise<{ host: string; port: number; url: string }> {
  const child = spawn(process.execPath, ['dist/main.js'], {
    // No load shedding: on two shared cores the event loop of a process starting up lags past its
    // threshold.
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      ...env
    },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  for await (const line of createInterface({ input: child.stdout })) {
    const address = /listening at http:\/\/([^ :]+):(\d+)/.exec(
      String((JSON.parse(line) as { msg?: string }).msg)
    )
    if (address !== null) {
      // The rest of its output is not read: drained so that it never blocks on a full pipe.
      child.stdout.resume()
      return {
        host: address[1]!,
        port: Number(address[2]),
        url: `http://${address[1]}:${address[2]}`
      }
    }
  }
  throw new Error('the server did not start')
}

const HAPROXY = existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy'

/**
 * HAProxy (the Debian package) with deploy/haproxy.cfg's settings in front of `gateway`; its
 * address once it forwards.
 */
async function startHaproxy (
  t: TestLike,
  gateway: { host: string; port: number }
): Promise<string> {
  const listen = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'gateway-haproxy-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'haproxy.cfg')
  writeFileSync(
    file,
    localHaproxyConfig(readFileSync('deploy/haproxy.cfg', 'utf8'), { listen, gateway })
  )
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let output = ''
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exited = new Promise<never>((_resolve, reject) => {
    child.once('error', (error) =>
      reject(
        new Error(`${HAPROXY} could not be started: ${error.message} (install the haproxy package)`)
      )
    )
    child.once('exit', (code) => reject(new Error(`haproxy exited with ${code}: ${output}`)))
  })
  exited.catch(() => {})
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  const url = `http://127.0.0.1:${listen}`
  // A guard against "never", not a judgement of speed: the health checks run every few seconds.
  const guard = Date.now() + 120_000
  for (;;) {
    const answered = await Promise.race([
      exited,
      fetch(`${url}/health/ready`).then(
        (res) => res.status,
        () => 0
      )
    ])
    if (answered === 200) return url
    if (Date.now() > guard) throw new Error(`haproxy did not forward to the gateway: ${output}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

async function * chunksOf (body: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0; at < body.length; at += 64 * 1024) yield body.subarray(at, at + 64 * 1024)
}

/**
 * Ten POSTs of `body`, one after the other, with fetch on one keep-alive
 * connection at a time (undici's Agent, connections: 1): each answer's status
 * and code, or how the request failed.
 */
async function tenPosts (
  url: string,
  body: Buffer,
  { chunked, contentType = 'application/json' }: { chunked: boolean; contentType?: string }
): Promise<string[]> {
  const agent = new Agent({ connections: 1 })
  const answers: string[] = []
  try {
    for (let i = 0; i < 10; i++) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          dispatcher: agent,
          headers: { 'content-type': contentType },
          body: chunked ? chunksOf(body) : body,
          duplex: 'half'
        })
        const { code } = (await res.json()) as { code?: string }
        answers.push(`${res.status} ${code}`)
      } catch (error) {
        const { cause, message } = error as Error & { cause?: { code?: string } }
        answers.push(`failed: ${cause?.code ?? message}`)
      }
    }
  } finally {
    await agent.close()
  }
  return answers
}

const tenTimes = (answer: string) => Array.from({ length: 10 }, () => answer)

test('fetch reads the 413 of ten 5 MB POSTs in a row on one keep-alive connection, with a ' +
  'content-length and chunked; and the 415', async (t) => {
  const { url } = await startServer(t)
  t.same(
    await tenPosts(`${url}${BOOKED}`, FIVE_MB, { chunked: false }),
    tenTimes('413 PAYLOAD_TOO_LARGE'),
    'with a content-length'
  )
  t.same(
    await tenPosts(`${url}${BOOKED}`, FIVE_MB, { chunked: true }),
    tenTimes('413 PAYLOAD_TOO_LARGE'),
    'chunked'
  )
  t.same(
    await tenPosts(`${url}${BOOKED}`, FIVE_MB, { chunked: true, contentType: 'text/plain' }),
    tenTimes('415 UNSUPPORTED_MEDIA_TYPE'),
    'not JSON: 415'
  )
})

test('fetch reads a 401 given before the body is read, ten times in a row on one keep-alive ' +
  'connection', async (t) => {
  const { url } = await startServer(t, {
    CLIENTS_FILE: writeClientsFile(t, [
      { name: 'web', key: 'web-key-0123456789abcdef', scopes: ['bookings:write'] }
    ])
  })
  t.same(
    await tenPosts(`${url}${BOOKED}`, FIVE_MB, { chunked: false }),
    tenTimes('401 UNAUTHORIZED'),
    'with a content-length'
  )
  t.same(
    await tenPosts(`${url}${BOOKED}`, FIVE_MB, { chunked: true }),
    tenTimes('401 UNAUTHORIZED'),
    'chunked'
  )
})

test("through HAProxy with deploy/haproxy.cfg's settings, fetch reads the 413 of ten 5 MB POSTs " +
  'in a row, with a content-length and chunked', async (t) => {
  const config = readFileSync('deploy/haproxy.cfg', 'utf8')
  const local = localHaproxyConfig(config, {
    listen: 8080,
    gateway: { host: '127.0.0.1', port: 3000 }
  })
  const defaults = (text: string) =>
    parseHaproxy(text)
      .filter((s) => s.kind === 'defaults' || s.kind === 'backend')
      .map((s) => ({
        ...s,
        lines: s.lines.filter((words) => words[0] !== 'server' && words[0] !== 'default-server')
      }))
  t.same(
    defaults(local),
    defaults(config),
    'the timeouts, options and checks of the deployed file, unchanged'
  )

  const gateway = await startServer(t)
  const url = await startHaproxy(t, gateway)
  t.same(
    await tenPosts(`${url}${BOOKED}`, FIVE_MB, { chunked: false }),
    tenTimes('413 PAYLOAD_TOO_LARGE'),
    'with a content-length'
  )
  t.same(
    await tenPosts(`${url}${BOOKED}`, FIVE_MB, { chunked: true }),
    tenTimes('413 PAYLOAD_TOO_LARGE'),
    'chunked'
  )
})

/** A raw connection to the app, with what it received so far and how it ended. */
interface Raw {
  socket: Socket
  text: () => string
  /** Resolves when the received text matches `pattern`. */
  until: (pattern: RegExp) => Promise<void>
  /** When the gateway ended its side (FIN), and when the connection closed (ms since the start). */
  ended: Promise<number>
  closed: Promise<number>
  error: () => string | undefined
}

async function rawConnection (port: number): Promise<Raw> {
  // Half-open allowed: the caller goes on sending after the gateway's FIN.
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve)
    socket.once('error', reject)
  })
  const started = Date.now()
  let text = ''
  let error: string | undefined
  const waiting = new Set<() => void>()
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1')
    for (const check of waiting) check()
  })
  socket.on('error', (e: Error & { code?: string }) => { error = e.code ?? e.message })
  return {
    socket,
    text: () => text,
    until: (pattern) => new Promise<void>((resolve, reject) => {
      // A guard against "never": on a busy machine an answer can take seconds.
      const timer = setTimeout(() => {
        waiting.delete(check)
        reject(new Error(`not received: ${pattern}; got ${JSON.stringify(text.slice(0, 300))}`))
      }, 60_000)
      const check = () => {
        if (!pattern.test(text)) return
        clearTimeout(timer)
        waiting.delete(check)
        resolve()
      }
      waiting.add(check)
      check()
    }),
    ended: new Promise(resolve => socket.once('end', () => resolve(Date.now() - started))),
    closed: new Promise(resolve => socket.once('close', () => resolve(Date.now() - started))),
    error: () => error
  }
}

const ANSWER_413 = /^HTTP\/1\.1 413 [^]*?\r\n\r\n\{[^}]*\}/

function head (method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: gateway\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`
}

test('a refused body of at most 256 KiB is read to its end, and the connection serves the next ' +
  'request', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const raw = await rawConnection((app.server.address() as { port: number }).port)
  const length = 200_000
  t.ok(length <= KEEP_BYTES)
  raw.socket.write(
    head('POST', BOOKED, { 'content-type': 'application/json', 'content-length': length })
  )
  raw.socket.write(Buffer.alloc(100_000, 'a'))
  await raw.until(ANSWER_413)
  t.notMatch(raw.text(), /\r\nconnection: close\r\n/i, 'the answer keeps the connection')
  raw.socket.write(Buffer.alloc(length - 100_000, 'a'))
  raw.socket.write(head('GET', '/health/live', {}))
  await raw.until(/HTTP\/1\.1 200 /)
  t.equal(raw.error(), undefined)
  raw.socket.destroy()
})

test("a longer refused body: connection: close, the gateway's FIN after the answer, the rest " +
  'read until the caller ends its side, no reset', async (t) => {
  const { app, logs } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const raw = await rawConnection((app.server.address() as { port: number }).port)
  raw.socket.write(
    head('POST', BOOKED, { 'content-type': 'application/json', 'content-length': 1_000_000 })
  )
  raw.socket.write(Buffer.alloc(100_000, 'a'))
  await raw.until(ANSWER_413)
  t.match(raw.text(), /\r\nconnection: close\r\n/i, 'the answer says the connection ends')
  await raw.ended
  t.pass('the gateway ended its side after the answer')
  // The caller goes on sending: the gateway still reads.
  for (let i = 0; i < 8; i++) {
    await new Promise<void>((resolve, reject) =>
      raw.socket.write(Buffer.alloc(100_000, 'a'), (error) => (error ? reject(error) : resolve()))
    )
  }
  raw.socket.end()
  await raw.closed
  t.equal(raw.error(), undefined, 'closed without a reset')
  t.notOk(
    logs.some((line) => line.msg === 'request refused by the HTTP parser'),
    'the body cut short is no request to answer'
  )
})

test('a body that goes on past the bound ends the connection, after the answer', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const server = serverSide(app)
  const raw = await rawConnection((app.server.address() as { port: number }).port)
  raw.socket.write(
    head('POST', BOOKED, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' })
  )
  const chunk = Buffer.concat([
    Buffer.from('10000\r\n'),
    Buffer.alloc(0x10000, 'a'),
    Buffer.from('\r\n')
  ])
  const send = async () => {
    while (!raw.socket.destroyed) {
      if (!raw.socket.write(chunk)) {
        await new Promise((resolve) => {
          raw.socket.once('drain', resolve)
          raw.socket.once('close', resolve)
        })
      }
    }
  }
  const sent = send()
  await raw.until(ANSWER_413)
  t.match(raw.text(), /\r\nconnection: close\r\n/i, 'a body of unknown length: the connection ends')
  await raw.closed
  await sent
  // What ended it, as the gateway saw it: LINGER_BYTES read, or LINGER_MS gone, whichever first.
  const [answered, closed] = await Promise.all([server.answered, server.closed])
  const more = closed.bytes - answered.bytes
  const ms = Math.round(closed.at - answered.at)
  t.ok(more <= LINGER_BYTES + ONE_READ,
    `${more} bytes read after the answer: at most LINGER_BYTES, and the read that passed it`)
  t.ok(more > LINGER_BYTES || ms >= LINGER_MS - 5, `closed after ${more} bytes and ${ms} ms`)
})

test('a refused body that stops coming within the bound: the gateway ends its side after ' +
  'KEEP_MS, and the connection after LINGER_MS more', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const server = serverSide(app)
  const raw = await rawConnection((app.server.address() as { port: number }).port)
  raw.socket.write(
    head('POST', BOOKED, { 'content-type': 'application/json', 'content-length': 200_000 })
  )
  raw.socket.write(Buffer.alloc(100_000, 'a'))
  await raw.until(ANSWER_413)
  await raw.ended
  t.pass('the gateway ended its side')
  // The caller never ends its side: the gateway closes the connection on its own.
  const [answered, ended, closed] = await Promise.all([
    server.answered,
    server.ended,
    server.closed
  ])
  // Timers never fire early; how late they fire is the machine's business (a timer that never
  // fires leaves the test to its time limit).
  const fin = Math.round(ended.at - answered.at)
  const close = Math.round(closed.at - ended.at)
  t.ok(fin >= KEEP_MS - 5, `the FIN ${fin} ms after the answer (KEEP_MS ${KEEP_MS})`)
  t.ok(close >= LINGER_MS - 5, `closed ${close} ms after the FIN (LINGER_MS ${LINGER_MS})`)
  t.equal(closed.bytes, ended.bytes, 'nothing more came: the time, not the bytes, ended it')
  raw.socket.destroy()
})

/** What the gateway's side of a connection had read, and when (performance.now()). */
interface Mark { bytes: number, at: number }

/**
 * The gateway's side of the next connection and request: what it had read
 * when its answer was finished, when it ended its side (its FIN), and when
 * the connection closed (the server's own socket.bytesRead, not what the
 * caller managed to write).
 */
function serverSide (app: Built['app']): Record<'answered' | 'ended' | 'closed', Promise<Mark>> {
  const mark = (socket: Socket): Mark => ({ bytes: socket.bytesRead, at: performance.now() })
  const connection = new Promise<Socket>(resolve => app.server.once('connection', resolve))
  const whenItEmits = (event: 'finish' | 'close') => connection.then(socket =>
    new Promise<Mark>(resolve => socket.once(event, () => resolve(mark(socket)))))
  return {
    answered: new Promise(resolve => app.server.once('request', (req: IncomingMessage, res) => {
      res.once('finish', () => resolve(mark(req.socket)))
    })),
    ended: whenItEmits('finish'),
    closed: whenItEmits('close')
  }
}

/** Writes `chunk` until the connection closes: as fast as it takes them, or one every `everyMs`. */
async function keepSending (socket: Socket, chunk: Buffer, everyMs = 0): Promise<void> {
  while (!socket.destroyed) {
    if (everyMs > 0) await new Promise(resolve => setTimeout(resolve, everyMs))
    if (socket.destroyed) return
    if (!socket.write(chunk)) {
      await new Promise<void>(resolve => {
        const done = () => {
          socket.off('drain', done)
          socket.off('close', done)
          resolve()
        }
        socket.on('drain', done)
        socket.on('close', done)
      })
    }
  }
}

const GIB = 1024 ** 3
/** One read of the connection (libuv reads 64 KiB at a time): the bound is checked after each. */
const ONE_READ = 64 * 1024
const BYTES = Buffer.alloc(ONE_READ, 'a')
const CHUNKED = Buffer.concat([Buffer.from('10000\r\n'), BYTES, Buffer.from('\r\n')])
const JSON_BODY = { 'content-type': 'application/json' }

const WEB = { name: 'web', key: 'web-key-0123456789abcdef', scopes: ['bookings:write' as const] }
const LENGTH = { 'content-length': GIB }
const UNKNOWN_LENGTH = { 'transfer-encoding': 'chunked' }
const REFUSALS = [
  { refusal: '413, by its content-length', status: 413, headers: { ...JSON_BODY, ...LENGTH } },
  { refusal: '413, chunked', status: 413, headers: { ...JSON_BODY, ...UNKNOWN_LENGTH } },
  { refusal: '415', status: 415, headers: { 'content-type': 'text/plain', ...LENGTH } },
  { refusal: '401', status: 401, headers: { ...JSON_BODY, ...LENGTH }, clients: [WEB] }
]

test('a caller that keeps sending after an early refusal: LINGER_BYTES more read', async (t) => {
  for (const { refusal, status, headers, clients } of REFUSALS) {
    await t.test(refusal, async (t) => {
      const { app } = await build(t, clients === undefined ? {} : { clients })
      await app.listen({ port: 0, host: '127.0.0.1' })
      const server = serverSide(app)
      const raw = await rawConnection((app.server.address() as { port: number }).port)
      raw.socket.write(head('POST', BOOKED, headers))
      const sent = keepSending(raw.socket, 'transfer-encoding' in headers ? CHUNKED : BYTES)
      await raw.until(new RegExp(`^HTTP/1\\.1 ${status} `))
      const [answered, closed] = await Promise.all([server.answered, server.closed])
      await sent
      const more = closed.bytes - answered.bytes
      const ms = Math.round(closed.at - answered.at)
      t.ok(more <= LINGER_BYTES + ONE_READ,
        `${more} bytes read after the answer: at most LINGER_BYTES, and the read that passed it`)
      // Which bound ended it is the machine's speed; one of them did.
      t.ok(more > LINGER_BYTES || ms >= LINGER_MS - 5, `closed after ${more} bytes and ${ms} ms`)
    })
  }
})

test('a caller that keeps sending slowly: closed LINGER_MS after the answer', async (t) => {
  const { app } = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const server = serverSide(app)
  const raw = await rawConnection((app.server.address() as { port: number }).port)
  raw.socket.write(head('POST', BOOKED, { ...JSON_BODY, 'content-length': GIB }))
  // 16 KiB every 20 ms: about 1.6 MB in LINGER_MS, far from LINGER_BYTES.
  const sent = keepSending(raw.socket, Buffer.alloc(16 * 1024, 'a'), 20)
  await raw.until(ANSWER_413)
  const [answered, closed] = await Promise.all([server.answered, server.closed])
  await sent
  t.ok(closed.bytes - answered.bytes < LINGER_BYTES, 'the bytes did not end it')
  // A timer never fires early; how late it fires is the machine's business.
  const ms = Math.round(closed.at - answered.at)
  t.ok(ms >= LINGER_MS - 5, `closed ${ms} ms after the answer (LINGER_MS ${LINGER_MS})`)
})
