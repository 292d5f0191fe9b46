import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { request } from 'undici'

test('SIGTERM: requests in flight finish, new ones are refused, the process exits in time', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    // A loaded test machine would make the gateway (rightly) shed load; not the subject here.
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const lines = createInterface({ input: child.stdout })
  let address = ''
  for await (const line of lines) {
    const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line)
    if (match !== null) {
      address = match[1] as string
      break
    }
  }
  t.ok(address, 'listening')

  // Twenty slow lookups (the sandbox's SLOW fault answers after 3 s).
  const inFlight = Array.from({ length: 20 }, (_, i) =>
    request(`${address}/v1/customs/bc261/containers?blNo=SBX-SLOW`, { headers: { 'x-request-id': `slow-${i}` } })
      .then(async res => ({ status: res.statusCode, body: await res.body.text() })))
  // Well inside the 3 s: every request has reached the gateway, even on a loaded machine.
  await new Promise(resolve => setTimeout(resolve, 1500))
  const started = Date.now()
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  await new Promise(resolve => setTimeout(resolve, 200))

  const refused = await request(`${address}/health/live`).then(() => 'answered', (error: { code?: string }) => error.code ?? 'error')
  t.equal(refused, 'ECONNREFUSED', 'no new connections once closing')

  const answers = await Promise.all(inFlight)
  t.same(answers.map(a => a.status), Array(20).fill(200), `every request in flight got its answer: ${JSON.stringify(answers.filter(a => a.status !== 200).slice(0, 2))}`)
  const [code] = await exited
  t.equal(code, 0)
  t.ok(Date.now() - started < 10_000, `exited ${Date.now() - started} ms after SIGTERM`)
})
