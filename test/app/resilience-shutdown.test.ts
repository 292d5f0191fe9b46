import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { request } from 'undici'

/** The grace SIGTERM gives requests in flight: exiting by it, not before, would fail the bound. */
const GRACE_MS = 60_000

test('SIGTERM: requests in flight finish, new ones are refused, the process exits in ' +
  'time', async (t) => {
  // The gateway as npm start runs it (dist/main.js, built by tap's before step).
  const child = spawn(process.execPath, ['dist/main.js'], {
    // A loaded test machine would make the gateway (rightly) shed load; not the subject here.
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      // debug: Fastify's `incoming request` line, which says a request has reached the gateway.
      LOG_LEVEL: 'debug',
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0',
      SHUTDOWN_GRACE_MS: String(GRACE_MS)
    },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  // Every line the gateway logs, and a wait for the one that matches.
  const logged: string[] = []
  const waiting = new Set<() => void>()
  createInterface({ input: child.stdout }).on('line', (line) => {
    logged.push(line)
    for (const check of waiting) check()
  })
  const untilLogged = (matches: (lines: string[]) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!matches(logged)) return
        waiting.delete(check)
        resolve()
      }
      waiting.add(check)
      check()
    })
  const listening = /listening at (http:\/\/127\.0\.0\.1:\d+)/
  await untilLogged((lines) => lines.some((line) => listening.test(line)))
  const address = listening.exec(logged.join('\n'))?.[1] ?? ''
  t.ok(address, 'listening')

  // Twenty slow lookups (the sandbox's SLOW fault answers after 3 s).
  const inFlight = Array.from({ length: 20 }, (_, i) =>
    request(`${address}/v1/customs/bc261/containers?blNo=SBX-SLOW`, {
      headers: { 'x-request-id': `slow-${i}` }
    }).then(async (res) => ({ status: res.statusCode, body: await res.body.text() }))
  )
  // Once every one has reached the gateway (its log says so), well inside the 3 s.
  const incoming = (lines: string[]) =>
    lines.filter((line) => /"requestId":"slow-\d+".*"msg":"incoming request"/.test(line)).length
  await untilLogged((lines) => incoming(lines) === 20)
  const started = Date.now()
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  // Once it says it is closing, it stops listening as its close begins: on a busy machine that
  // can take a moment, so a connection still taken is tried again, up to 100 times.
  await untilLogged((lines) => lines.some((line) => line.includes('"msg":"closing"')))
  const attempt = () =>
    request(`${address}/health/live`).then(
      async (res) => {
        await res.body.dump()
        return `answered ${res.statusCode}`
      },
      (error: { code?: string }) => error.code ?? 'error'
    )
  const outcomes = [await attempt()]
  while (outcomes.at(-1) !== 'ECONNREFUSED' && outcomes.length < 100) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    outcomes.push(await attempt())
  }
  t.equal(outcomes.at(-1), 'ECONNREFUSED', `no new connections once closing: ${outcomes.join()}`)

  const answers = await Promise.all(inFlight)
  t.same(
    answers.map((a) => a.status),
    Array(20).fill(200),
    'every request in flight got its answer: ' +
    `${JSON.stringify(answers.filter((a) => a.status !== 200).slice(0, 2))}`
  )
  const [code] = await exited
  t.equal(code, 0)
  // Once the last answer is out, not at the end of the grace.
  t.ok(Date.now() - started < GRACE_MS / 2, `exited ${Date.now() - started} ms after SIGTERM`)
})
