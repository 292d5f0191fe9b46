import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Lexer } from 'marked'
import tap from 'tap'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { freePort } from '../free-port.ts'

// The recipe of docs/deployment.md that runs two gateways as processes, run as
// written: its shell block, taken from the page, in a shell of its own, then
// both gateways asked whether they share their state.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const HEADING = 'Replicas as processes'

// The build below, then the recipe's own start-ups (npm, tsx, two gateways) on a loaded machine.
tap.setTimeout(300_000)

/** The first `sh` block of the section of docs/deployment.md under HEADING. */
function recipe (markdown: string): string {
  const tokens = new Lexer().lex(markdown)
  const start = tokens.findIndex(token => token.type === 'heading' && token.text === HEADING)
  if (start < 0) throw new Error(`docs/deployment.md has no section "${HEADING}"`)
  for (const token of tokens.slice(start + 1)) {
    if (token.type === 'heading') break
    if (token.type === 'code' && token.lang === 'sh') return String(token.text)
  }
  throw new Error(`the section "${HEADING}" of docs/deployment.md has no sh block`)
}

/** Ends the recipe's process group (the shell and all it started), SIGKILL after 15 s. */
async function stopGroup (pid: number): Promise<void> {
  const alive = (): boolean => {
    try {
      process.kill(-pid, 0)
      return true
    } catch {
      return false
    }
  }
  if (!alive()) return
  process.kill(-pid, 'SIGTERM')
  const deadline = Date.now() + 15_000
  while (alive() && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
  if (alive()) process.kill(-pid, 'SIGKILL')
}

tap.test('the recipe starts Redis, the sandbox and two gateways sharing state', async (t) => {
  // dist/ is built, as `npm ci` leaves it (tap's before step keeps it current).
  const run = await mkdtemp(join(tmpdir(), 'gateway-recipe-'))
  t.teardown(() => rm(run, { recursive: true, force: true }))
  const [redisPort, sandboxPort, portA, portB] =
    await Promise.all([freePort(), freePort(), freePort(), freePort()])
  const script = recipe(await readFile(join(ROOT, 'docs/deployment.md'), 'utf8'))

  const shell = spawn('sh', ['-c', script], {
    cwd: ROOT,
    // An operator's shell: nothing of the test runner's environment but where programs are.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      REDIS_PORT: String(redisPort),
      SANDBOX_PORT: String(sandboxPort),
      PORT_A: String(portA),
      PORT_B: String(portB),
      RUN: run
    },
    // Its own process group, so that teardown ends everything it started.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const pid = shell.pid
  if (pid === undefined) throw new Error('sh did not start')
  t.teardown(() => stopGroup(pid))
  let output = ''
  shell.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  shell.stderr.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const [code] = await once(shell, 'exit') as [number | null]
  t.equal(code, 0, `the recipe ran to its end\n${output}`)

  t.match(output, `${portA}: 200 idempotent-replayed: \n${portB}: 200 idempotent-replayed: true\n`,
    'its own write: answered on A, replayed on B')

  const key = /cgw_[\w-]+/.exec(await readFile(join(run, 'key.txt'), 'utf8'))?.[0] ?? ''
  const post = async (port: number) => await fetch(
    `http://127.0.0.1:${port}/v1/bookings/${F.bookingRequestId}/offers`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': 'recipe-test-offer'
      },
      body: JSON.stringify({
        serviceOrderId: 'SO-1', price: 1, offeredAt: '2024-03-01T08:15:00+07:00'
      })
    })
  const first = await post(portA)
  const firstText = await first.text()
  t.equal(first.status, 200, firstText)
  const again = await post(portB)
  t.equal(again.headers.get('idempotent-replayed'), 'true', 'B replays what A stored in Redis')
  t.equal(await again.text(), firstText, 'byte for byte')
  const hubLog = await readFile(join(run, 'sandbox.log'), 'utf8')
  t.equal(hubLog.match(/ operation=DetilBooking fault=/g)?.length, 1, 'the hub got the offer once')
  t.equal(hubLog.match(/ operation=DetilBooking\/isBooked fault=/g)?.length, 1,
    'and the recipe\'s write once')
})
