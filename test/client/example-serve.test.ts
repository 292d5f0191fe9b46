import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type Server } from 'node:net'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { choosePort, freePort, isFree, PortTakenError } from '../../examples/web/ports.ts'

/**
 * `npm run example` (examples/web/serve.ts) as a person runs it: ports that
 * are taken are said in words, a default port gives way to a free one, and
 * it says whether it started a gateway of its own.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HOST = '127.0.0.1'

/**
 * Holds a port, as another program would; `undefined` when it is held already (by someone else: as
 * good for the test).
 */
async function hold (port = 0): Promise<{ port: number, server?: Server }> {
  // Connections to it (a client asking what holds the port) are dropped at once.
  const server = createServer(socket => socket.destroy())
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, HOST, () => resolve(true))
  })
  if (!bound) return { port }
  t.teardown(() => new Promise<void>(resolve => server.close(() => resolve())))
  return { port: (server.address() as { port: number }).port, server }
}

interface Run { child: ChildProcess, output: () => string, exited: Promise<number | null> }

/**
 * Process groups of the runs still going: ended with this process, whatever ends it, so that no
 * gateway they started outlives the test.
 */
const groups = new Set<number>()
process.once('exit', () => {
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL')
    } catch {}
  }
})

function run (args: string[]): Run {
  // Its own process group, with the gateway it may start: the teardown can end both.
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/web/serve.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true
  })
  const group = child.pid!
  groups.add(group)
  let text = ''
  child.stdout.on('data', (chunk: Buffer) => { text += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      // As Ctrl-C would: it stops the gateway it started; then nothing of the group is left.
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5000))])
    }
    try { process.kill(-group, 'SIGKILL') } catch {}
    groups.delete(group)
  })
  return { child, output: () => text, exited }
}

async function until (run: Run, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = pattern.exec(run.output())
    if (found !== null) return found
    if (run.child.exitCode !== null || Date.now() > deadline) {
      throw new Error('not printed: ' +
      `${pattern}\n${run.output()}`)
    }
    await new Promise(resolve => setTimeout(resolve, 50))
  }
}

t.test(
  'choosePort: a free port as asked; a default taken gives way, said why; one asked for that is ' +
  'taken is an error naming the option',
  async (t) => {
    const free = await freePort(HOST)
    t.same(
      await choosePort({
        wanted: free,
        explicit: true,
        host: HOST,
        what: 'the page',
        option: '--port'
      }),
      { port: free }
    )
    t.ok(
      (
        await choosePort({
          wanted: 0,
          explicit: true,
          host: HOST,
          what: 'the page',
          option: '--port'
        })
      ).port > 0,
      '0: a free port'
    )
    const taken = await hold()
    t.equal(await isFree(taken.port, HOST), false)
    const instead = await choosePort({
      wanted: taken.port,
      explicit: false,
      host: HOST,
      what: 'the page',
      option: '--port'
    })
    t.not(instead.port, taken.port)
    t.equal(
      instead.note,
      `port ${taken.port}, the default for the page, is taken: using a free one instead (--port ` +
      '<port> chooses)'
    )
    await t.rejects(
      choosePort({
        wanted: taken.port,
        explicit: true,
        host: HOST,
        what: 'the page',
        option: '--port'
      }),
      new PortTakenError(
        `port ${taken.port} for the page is taken: choose another with --port <port>, or --port ` +
        '0 for any free one'
      )
    )
  }
)

t.test(
  'a page port asked for that is taken: one sentence saying so, exit 1, nothing started',
  async (t) => {
    const taken = await hold()
    const example = run(['--port', String(taken.port), '--gateway', 'http://127.0.0.1:9'])
    t.equal(await example.exited, 1)
    t.match(
      example.output(),
      `npm run example: port ${taken.port} for the page is taken: choose another with --port ` +
      '<port>, or --port 0 for any free one'
    )
    t.notMatch(example.output(), /EADDRINUSE|\bat \w+ \(/, 'no stack trace')
  }
)

t.test('a gateway port asked for that is taken, by a gateway: said so, exit 1', async (t) => {
  // A gateway-like listener: answers /health/live as the gateway does.
  const { createServer: createHttpServer } = await import('node:http')
  const fake = createHttpServer((_req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end('{"data":{"status":"ok"},"meta":{}}')
  })
  await new Promise<void>(resolve => fake.listen(0, HOST, resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    fake.closeAllConnections()
    fake.close(() => resolve())
  }))
  const port = (fake.address() as { port: number }).port
  const example = run(['--port', '0', '--gateway-port', String(port)])
  t.equal(await example.exited, 1)
  t.match(
    example.output(),
    `port ${port} for the gateway is taken (a customs gateway answers there): choose another ` +
    'with --gateway-port <port>'
  )
  t.notMatch(example.output(), 'starting the gateway', 'no gateway started')
})

t.test(
  'with --gateway it starts no gateway and says so; the default page port gives way when taken',
  async (t) => {
    // 8080, the default: held here, or by someone else already.
    await hold(8080)
    const example = run(['--gateway', 'https://customs-gateway.example.internal'])
    const [, port] = await until(example, /example page: http:\/\/127\.0\.0\.1:(\d+)\//)
    t.not(port, '8080')
    t.match(example.output(), 'note: port 8080, the default for the page, is taken')
    t.match(
      example.output(),
      'gateway: not started by this command; the page calls ' +
      'https://customs-gateway.example.internal, whose CORS_ORIGINS must list ' +
      `http://127.0.0.1:${port}`
    )
    t.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 200, 'the page is served')
    example.child.kill('SIGTERM')
    t.equal(await example.exited, 0)
  }
)

t.test(
  'without --gateway it starts its own on the sandbox, on a free port when 3000 is taken, and ' +
  'stops it with itself',
  async (t) => {
    await hold(3000)
    const example = run(['--port', '0'])
    const [, url] = await until(
      example,
      /gateway: started by this command on (http:\/\/127\.0\.0\.1:\d+), on its built-in sandbox hub/,
      90_000
    )
    t.match(example.output(), 'note: port 3000, the default for the gateway, is taken')
    t.not(url, 'http://127.0.0.1:3000')
    t.equal((await fetch(`${url}/health/live`)).status, 200, 'the gateway answers')
    example.child.kill('SIGTERM')
    t.equal(await example.exited, 0)
    await t.rejects(fetch(`${url}/health/live`), 'and is gone with it')
  }
)
